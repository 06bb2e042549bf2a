import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as authorizer } from '#functions/authorizer';
import { handler as listSchemas } from '#functions/schemas/list-schemas';
import { functionLogicalId } from '#infra/constructs/service-function';
import { eventFunctions } from '#lib/routes/event-functions';
import { functionNameOf, routes } from '#lib/routes/route-table';
import { EVENTS_DIR, expectedFiles, INDEX_FILE, sampleEvents } from '#scripts/sample-events';

/** The sample events of `sam local invoke -e` and `npm run invoke` (events/, docs/infrastructure.md). */
const readEvent = <T>(file: string): T => JSON.parse(readFileSync(join(EVENTS_DIR, file), 'utf8')) as T;
const index = readEvent<Array<{ file: string; functionId: string }>>(INDEX_FILE);

const context = (functionName: string) =>
  ({
    functionName,
    awsRequestId: '00000000-0000-4000-8000-000000000000',
    getRemainingTimeInMillis: () => 29_000,
  }) as Context;

describe('events/', () => {
  it('has an event for every route, event function and the authorizer (npm run -s events)', () => {
    const functionIds = [
      functionLogicalId('Authorizer'),
      ...routes.map((route) => functionLogicalId(functionNameOf(route))),
      ...eventFunctions.map((fn) => functionLogicalId(fn.name)),
    ];
    const indexed = index.map((entry) => entry.functionId);
    for (const functionId of functionIds) expect(indexed, `no sample event for ${functionId}`).toContain(functionId);
    for (const { file } of index) expect(existsSync(join(EVENTS_DIR, file)), file).toBe(true);
  });

  it('gives every route a sample of its own with the status it answers (ROUTE_SAMPLES)', () => {
    const generic = sampleEvents()
      .filter((event) => 'statusCode' in event.expect && event.expect.statusCode === 'not 5xx')
      .map((event) => event.file);
    expect(generic).toEqual([]);
  });

  it('is what the generator writes from the route table (npm run -s events)', () => {
    const expected = expectedFiles();
    const present = readdirSync(EVENTS_DIR).filter((file) => file.endsWith('.json') && !file.startsWith('env-vars'));
    expect(present.sort()).toEqual(Object.keys(expected).sort());
    for (const [file, content] of Object.entries(expected)) {
      expect(readEvent(file), file).toEqual(JSON.parse(content));
    }
  });

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
