import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionLogicalId } from '#infra/constructs/service-function';
import { eventFunctions } from '#lib/routes/event-functions';
import { functionNameOf, routes } from '#lib/routes/route-table';
import { EVENTS_DIR, expectedFiles, INDEX_FILE, sampleEvents } from '#scripts/sample-events';

/**
 * The sample events of `sam local invoke -e` and `npm run invoke` (events/, docs/infrastructure.md). Two handlers
 * run on theirs in test/integration/sample-event-handlers.test.ts: the authorizer reads the stack's table.
 */
const readEvent = <T>(file: string): T => JSON.parse(readFileSync(join(EVENTS_DIR, file), 'utf8')) as T;
const index = readEvent<Array<{ file: string; functionId: string }>>(INDEX_FILE);

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
});
