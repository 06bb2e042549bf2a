import { attr, defineEntity } from './define-entity.ts';
import { requestEntity } from './request.ts';

/** A request's decision deadline under watch, the record decisionDeadlineEntity stores. */
export interface DecisionDeadline {
  clientId: string;
  externalId: string;
  /** Which of the due index's partitions holds it (shardOf the request's ids): no one hot partition. */
  shard: string;
  /** The request's `authorization.decisionDueAt` when it was written. */
  decisionDueAt: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * A request's decision deadline while nobody has decided it (docs/payer-api.md, "Decision deadlines"), in
 * the request's item collection: written with the change that records the deadline, removed with the one
 * that decides the request, or by the dispatcher when the deadline passes (it fires once). gsi1 holds the
 * due order, spread over the table's shards (`DECISIONSDUE#<shard>`) as the re-checks are: the dispatcher
 * queries each shard for what is due (no Scan). A sparse index: only undecided, watched requests have one.
 */
export const decisionDeadlineEntity = defineEntity<DecisionDeadline>()({
  name: 'DecisionDeadline',
  keys: {
    pk: requestEntity.keys.pk.template,
    sk: 'DECISIONDUE',
    gsi1pk: 'DECISIONSDUE#<shard>',
    gsi1sk: '<decisionDueAt>#<clientId>#<externalId>',
  },
  attributes: {
    clientId: attr.string(),
    externalId: attr.string(),
    shard: attr.string(),
    decisionDueAt: attr.string(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
