import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { KeyTemplate } from '#lib/entities/define-entity';
import { TABLE_KEY, tableIndexes } from '#lib/table';

/*
 * docs/data-model.md against the entity declarations: every declared entity has a row in its
 * Entities table, every row is declared, and each key template in the table is what the declaration
 * builds. Declarations are found by importing every file of lib/entities/, so a new one is checked
 * without being listed here.
 */
const entitiesDir = new URL('../../lib/entities/', import.meta.url);
const modules = await Promise.all(
  readdirSync(entitiesDir)
    .filter((file) => file.endsWith('.ts') && file !== 'define-entity.ts')
    .map((file) => import(/* @vite-ignore */ new URL(file, entitiesDir).href)),
);
const isEntity = (value: any) => typeof value?.name === 'string' && value.keys && typeof value.toItem === 'function';
const entities = new Map<string, any>(
  modules.flatMap((module) => Object.values(module).filter(isEntity)).map((entity: any) => [entity.name, entity]),
);

/** The rows of the table under `## Entities`, as header → cell (backquotes kept). */
const documentedEntities = () => {
  const doc = readFileSync(new URL('../../docs/data-model.md', import.meta.url), 'utf8');
  const lines = doc.slice(doc.indexOf('\n## Entities\n')).split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  const table = lines.slice(start, end).map((line) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim()),
  );
  const [header, , ...rows] = table;
  return rows.map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i] ?? ''])));
};
const rows = documentedEntities();

const keyColumns = [
  TABLE_KEY.partition,
  TABLE_KEY.sort,
  ...tableIndexes.flatMap((index) => [index.partition, index.sort]),
];
const unquote = (cell: string) => cell.replace(/^`(.*)`$/, '$1');
/** The template rendered with each slot's value being `<field>`: what the doc writes. */
const rendered = (template: KeyTemplate) =>
  template.render(Object.fromEntries(template.slots.map((slot) => [slot, `<${slot}>`])));

describe('docs/data-model.md, Entities table', () => {
  it('has one row per declared entity, and no other', () => {
    expect(entities.size).toBeGreaterThanOrEqual(7);
    const documented = rows.map((row) => row.entity);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...entities.keys()].sort());
  });

  it('has a column per key attribute of the table and its indexes', () => {
    expect(Object.keys(rows[0]!)).toEqual(['entity', ...keyColumns, 'other attributes']);
  });

  for (const row of rows) {
    it(`${row.entity}: the keys are those its declaration builds`, () => {
      const entity = entities.get(row.entity!);
      expect(entity, `${row.entity} is not declared in lib/entities/`).toBeDefined();
      for (const column of keyColumns) {
        const template: KeyTemplate | undefined = entity.keys[column];
        const documented = unquote(row[column]!);
        if (documented === '') expect(template, `${row.entity}.${column}`).toBeUndefined();
        else expect(template && rendered(template), `${row.entity}.${column}`).toBe(documented);
      }
    });

    it(`${row.entity}: the attributes it names are stored`, () => {
      const named = [...row['other attributes']!.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
      expect(entities.get(row.entity!).attributeNames).toEqual(expect.arrayContaining(named));
    });
  }

  it('every item carries entity, version, createdAt and updatedAt', () => {
    for (const entity of entities.values()) {
      expect(entity.attributeNames, entity.name).toEqual(
        expect.arrayContaining(['entity', 'version', 'createdAt', 'updatedAt']),
      );
    }
  });

  it('every partition key starts with the client id, but the API-key lookup, the JWKS, four work queues, the payer directory, the client directory and the payer subscriptions', () => {
    // The relay reads every client's pending events (docs/events.md), the webhook delivery sweep the due
    // deliveries (gsi1 of deliveries, by status and due time; docs/webhooks.md), the re-check dispatcher the
    // due re-checks and the decision deadlines under watch (gsi1's shards; docs/rechecks.md); each then reads or writes by its client's keys. The
    // outbox items', deliveries' and re-checks' own keys are the client's. The public JWKS route finds a
    // payer signing key set by its public id (docs/payer-api.md, "Signing keys"); the set's own key is its client's.
    // The payer endpoints are operator data, every client's alike: nothing of a tenant is in them
    // (docs/payer-connections.md). The client directory lists every client's id for the admin CLI's replay.
    // A payer's notification names only our subscription id, and the keeper reads the due ones across
    // clients (docs/payer-api.md, "Subscriptions"); what a notification then reads is its client's.
    const exceptions = new Set([
      `ApiKey.${TABLE_KEY.partition}`,
      'OutboxEvent.gsi1pk',
      'WebhookDelivery.gsi1pk',
      'Recheck.gsi1pk',
      'DecisionDeadline.gsi1pk',
      'PayerSigningKeySet.gsi1pk',
      'Client.gsi1pk',
      `PayerEndpoint.${TABLE_KEY.partition}`,
      'PayerEndpoint.gsi1pk',
      `PayerSubscription.${TABLE_KEY.partition}`,
      'PayerSubscription.gsi1pk',
    ]);
    for (const entity of entities.values()) {
      for (const column of [TABLE_KEY.partition, ...tableIndexes.map((index) => index.partition)]) {
        const template: KeyTemplate | undefined = entity.keys[column];
        if (!template || exceptions.has(`${entity.name}.${column}`)) continue;
        expect(template.template, `${entity.name}.${column}`).toMatch(/^CLIENT#<clientId>(#|$)/);
      }
    }
  });
});
