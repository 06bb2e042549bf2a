/**
 * The table's partitions as IAM sees them: patterns of `dynamodb:LeadingKeys` (StringLike, where `*` is any run
 * of characters, `#` included) for the partition keys of lib/entities/*. A function's `leadingKeys` name the
 * partitions each of its actions may touch (./access-model.ts). IAM's DynamoDB conditions reach a call's partition
 * key and its attribute names, never its sort key: a function that may write a partition may write every item in
 * it (docs/security.md, "What a worker's role may touch in the table"). No id holds `#` (client-chosen ids follow ID_PATTERN,
 * ours are UUIDs), so `CLIENT#*#REQ#*` matches request partitions and no other kind's;
 * test/unit/table-partitions.test.ts holds each pattern to the entities it matches.
 */
export const PARTITION = {
  /** A request and what shares its partition: its runs, authorization history, attachments and their slots, its re-check. */
  request: 'CLIENT#*#REQ#*',
  /** A check-auth-status batch (its progress: status, items, execution). */
  batch: 'CLIENT#*#RPABATCH#*',
  /** A portal account, its payer and search index entries, and its session lease. */
  portalAccount: 'CLIENT#*#PACC#*',
  /** A payer connection, and its pointer to its current PAS subscription. */
  payerConnection: 'CLIENT#*#PCONN#*',
  /** A PAS subscription, by our own id (the notification route's): no tenant's id in its key. */
  payerSubscription: 'PASSUB#*',
  /** One outbox item (an event). */
  outbox: 'CLIENT#*#EVENT#*',
  /** A webhook subscription's deliveries. */
  webhookDeliveries: 'CLIENT#*#WEBHOOK#*',
  /**
   * The client's automation in flight: its executions and their count. Two literals at the end: an id
   * cannot hold the `#` between them, so no request, portal account or payer connection matches it.
   */
  automation: 'CLIENT#*#AUTOMATION#INFLIGHT',
  /** A payer's endpoint in the operators' directory. */
  payerEndpoint: 'PAYER#*',
  /** A claim we submitted through PAS, by its identifier: its request. */
  submittedClaim: 'CLIENT#*#PASCLAIM#*',
  apiKey: 'APIKEY#*',
  /**
   * The client's own partition, `CLIENT#<clientId>` (the client, its organizations, users, webhooks, usage
   * counters, payer key set). StringLike cannot say "no `#` after the id", so this is every partition of every
   * client, of every kind.
   */
  anyClient: 'CLIENT#*',
} as const;

/** IAM's StringLike, as a LeadingKeys condition matches a partition key: `*` any run of characters, `?` one. */
export const stringLike = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);
