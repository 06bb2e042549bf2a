import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { actionsByPartitions } from '#infra/constructs/service-table';
import type { KeyTemplate } from '#lib/entities/define-entity';
import { payerConnectionEntity } from '#lib/entities/payer-connection';
import { portalAccountEntity } from '#lib/entities/portal-account';
import { requestEntity } from '#lib/entities/request';
import { automationFlightEntity } from '#lib/entities/storage-usage';
import { authorizerAccess, type RouteAccess, routeAccess } from '#lib/routes/access-model';
import { automationTasks, invokedFunctions, recheckTasks } from '#lib/routes/automation-tasks';
import {
  automationEventFunctions,
  eventFunctions,
  scheduledPayerFunctions,
  webhookDeliveryFunctions,
} from '#lib/routes/event-functions';
import { PARTITION, stringLike } from '#lib/routes/table-partitions';

/*
 * The `dynamodb:LeadingKeys` patterns against the entities' partition keys: IAM's StringLike (`*` any run of
 * characters, `?` one; case-sensitive) applied to keys the entities build, so that a pattern that would let a
 * function reach another kind of item fails here rather than on AWS, where nothing checks it before a call.
 */
const entitiesDir = new URL('../../lib/entities/', import.meta.url);
const modules = await Promise.all(
  readdirSync(entitiesDir)
    .filter((file) => file.endsWith('.ts') && file !== 'define-entity.ts')
    .map((file) => import(/* @vite-ignore */ new URL(file, entitiesDir).href)),
);
const isEntity = (value: any) =>
  typeof value?.name === 'string' && value.keys?.pk && typeof value.toItem === 'function';
const entities: Array<{ name: string; pk: KeyTemplate }> = modules
  .flatMap((module) => Object.values(module).filter(isEntity))
  .map((entity: any) => ({ name: entity.name, pk: entity.keys.pk }));

/** An entity's partition key with every slot holding `id`. */
const partitionOf = (pk: KeyTemplate, id: string) => pk.render(Object.fromEntries(pk.slots.map((slot) => [slot, id])));
/** The entities some of whose partitions, with ids `id`, the pattern matches. */
const matchedBy = (pattern: string, id: string) =>
  entities.filter(({ pk }) => stringLike(pattern, partitionOf(pk, id))).map(({ name }) => name);
/** The entities whose partition key template is the pattern, each slot a `*`. */
const ofPattern = (pattern: string) =>
  entities.filter(({ pk }) => partitionOf(pk, '*') === pattern).map(({ name }) => name);

/** Every function's access, by name. */
const everyAccess: Array<[string, RouteAccess]> = [
  ...Object.entries(routeAccess),
  ['Authorizer', authorizerAccess],
  ...[...automationTasks, ...invokedFunctions, ...recheckTasks].map((row): [string, RouteAccess] => [
    row.name,
    row.access,
  ]),
  ...[...eventFunctions, ...automationEventFunctions, ...webhookDeliveryFunctions, ...scheduledPayerFunctions].map(
    (row): [string, RouteAccess] => [row.name, row.access],
  ),
];
const patternsOf = (access: RouteAccess) =>
  actionsByPartitions(access.table ?? { actions: [] }).flatMap((group) => group.leadingKeys ?? []);

describe('the partitions of dynamodb:LeadingKeys', () => {
  it('are the only patterns any function names', () => {
    const named = new Set(everyAccess.flatMap(([, access]) => patternsOf(access)));
    expect([...named].filter((pattern) => !Object.values<string>(PARTITION).includes(pattern))).toEqual([]);
  });

  it("match their own kinds' partitions and no other kind's, whatever ids without # the clients choose", () => {
    // Ids a client may choose (ID_PATTERN: no #), among them every literal of the keys.
    const literals = [...new Set(entities.flatMap(({ pk }) => pk.template.split(/<[^>]+>|#/)))].filter(Boolean);
    for (const [name, pattern] of Object.entries(PARTITION)) {
      if (name === 'anyClient') continue;
      expect(ofPattern(pattern), name).not.toEqual([]);
      for (const id of ['c-1', ...literals]) {
        expect({ pattern, id, matched: matchedBy(pattern, id) }).toEqual({ pattern, id, matched: ofPattern(pattern) });
      }
    }
  });

  it("the client's own partition: CLIENT#* matches every client partition, of every kind", () => {
    const clientKinds = entities.filter(({ pk }) => pk.template.startsWith('CLIENT#')).map(({ name }) => name);
    expect(matchedBy(PARTITION.anyClient, 'c-1')).toEqual(clientKinds);
    expect(clientKinds).toEqual(expect.arrayContaining(['Request', 'PortalAccount', 'Webhook', 'Client']));
  });

  it('the automation partition ends in two literals: no request, portal account or payer connection id matches it', () => {
    const named = (pk: string) => stringLike(PARTITION.automation, pk);
    expect(named(automationFlightEntity.key({ clientId: 'c-1', executionName: 'e-1' }).pk)).toBe(true);
    for (const externalId of ['AUTOMATION', 'INFLIGHT', 'AUTOMATION-INFLIGHT']) {
      expect(named(requestEntity.key({ clientId: 'c-1', externalId }).pk)).toBe(false);
      expect(named(portalAccountEntity.key({ clientId: 'c-1', externalId }).pk)).toBe(false);
      expect(named(payerConnectionEntity.key({ clientId: 'c-1', externalId }).pk)).toBe(false);
    }
  });
});

describe('leadingKeys per action', () => {
  it('groups the actions that name the same partitions into one statement, each list sorted', () => {
    expect(
      actionsByPartitions({
        actions: ['GetItem', 'PutItem', 'DeleteItem'],
        leadingKeys: { GetItem: ['B#*', 'A#*'], PutItem: ['C#*'], DeleteItem: ['A#*', 'B#*', 'A#*'] },
      }),
    ).toEqual([
      { actions: ['GetItem', 'DeleteItem'], leadingKeys: ['A#*', 'B#*'] },
      { actions: ['PutItem'], leadingKeys: ['C#*'] },
    ]);
    expect(actionsByPartitions({ actions: ['GetItem', 'PutItem'], leadingKeys: ['A#*'] })).toEqual([
      { actions: ['GetItem', 'PutItem'], leadingKeys: ['A#*'] },
    ]);
    expect(actionsByPartitions({ actions: ['GetItem'] })).toEqual([{ actions: ['GetItem'] }]);
  });

  it('refuses an action without its partitions, or partitions of an action not declared', () => {
    expect(() => actionsByPartitions({ actions: ['GetItem', 'PutItem'], leadingKeys: { GetItem: ['A#*'] } })).toThrow(
      /the actions are GetItem, PutItem/,
    );
    expect(() =>
      actionsByPartitions({ actions: ['GetItem'], leadingKeys: { GetItem: ['A#*'], DeleteItem: ['A#*'] } }),
    ).toThrow(/leadingKeys name GetItem, DeleteItem/);
    expect(() => actionsByPartitions({ actions: ['GetItem'], leadingKeys: { GetItem: [] } })).toThrow();
  });

  it('every function with per-action partitions names them for exactly its actions', () => {
    for (const [name, access] of everyAccess) {
      expect(() => patternsOf(access), name).not.toThrow();
    }
  });
});
