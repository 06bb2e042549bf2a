import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as authorizer } from '#functions/authorizer';
import { handler as listSchemas } from '#functions/schemas/list-schemas';
import { EVENTS_DIR } from '#scripts/sample-events';

/**
 * Handlers on their sample events of events/ (test/infra/sample-events.test.ts checks the files), in this
 * process: the authorizer looks the sample key up in the local stack's table.
 */
const readEvent = <T>(file: string): T => JSON.parse(readFileSync(join(EVENTS_DIR, file), 'utf8')) as T;

const context = (functionName: string) =>
  ({
    functionName,
    awsRequestId: '00000000-0000-4000-8000-000000000000',
    getRemainingTimeInMillis: () => 29_000,
  }) as Context;

describe('events/', () => {
  it('list-schemas.json: the list-schemas handler answers with the schema index', async () => {
    // As API Gateway sends it: the handler's own type says what its middleware makes of the body.
    const event = readEvent<Parameters<typeof listSchemas>[0]>('list-schemas.json');
    const response = await listSchemas(event, context('ListSchemas'));
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
    });
    const { schemas } = JSON.parse(response.body) as { schemas: Array<{ name: string; href: string }> };
    expect(schemas.length).toBeGreaterThan(0);
    for (const schema of schemas) expect(schema.href).toBe(`/api/external/v1.1/Schemas/${schema.name}`);
  });

  it('authorizer.json: the authorizer refuses the sample key, which no client owns', async () => {
    await expect(authorizer(readEvent<APIGatewayRequestAuthorizerEvent>('authorizer.json'))).rejects.toThrow(
      'Unauthorized',
    );
  });
});
