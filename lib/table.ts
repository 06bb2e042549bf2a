/**
 * The single table's shape, shared by the CDK stack and the local stack's bootstrap so both
 * create the same keys and indexes. Index names are generic: what they hold is in docs/data-model.md.
 */
export const TABLE_KEY = { partition: 'pk', sort: 'sk' } as const;

export const GSI1 = { name: 'gsi1', partition: 'gsi1pk', sort: 'gsi1sk' } as const;

export const tableIndexes = [GSI1] as const;

/**
 * The table's time-to-live attribute (epoch seconds): DynamoDB deletes an item some time after it.
 * Only idempotency records carry it (lib/http/idempotency.ts); the name is Powertools' default.
 */
export const TTL_ATTRIBUTE = 'expiration';
