/**
 * The single table's shape, shared by the CDK stack and the local stack's bootstrap so both
 * create the same keys and indexes. Index names are generic: what they hold is in docs/data-model.md.
 */
export const TABLE_KEY = { partition: 'pk', sort: 'sk' } as const;

export const GSI1 = { name: 'gsi1', partition: 'gsi1pk', sort: 'gsi1sk' } as const;
export const GSI2 = { name: 'gsi2', partition: 'gsi2pk', sort: 'gsi2sk' } as const;
export const GSI3 = { name: 'gsi3', partition: 'gsi3pk', sort: 'gsi3sk' } as const;
export const GSI4 = { name: 'gsi4', partition: 'gsi4pk', sort: 'gsi4sk' } as const;

/** Every global secondary index, all projecting ALL (a query's items need no second read). */
export const tableIndexes = [GSI1, GSI2, GSI3, GSI4] as const;

export type IndexName = (typeof tableIndexes)[number]['name'];

/**
 * The table's time-to-live attribute (epoch seconds): DynamoDB deletes an item some time after it.
 * Idempotency records (lib/http/idempotency.ts: the name is Powertools' default), leases, usage windows,
 * executions in flight and outbox items (lib/events/outbox.ts) carry it.
 */
export const TTL_ATTRIBUTE = 'expiration';
