import type { PortalAccountLease } from '#lib/rpa/account-lease';
import { enteredValuesFromStored } from '#lib/rpa/portal-answers';
import type {
  BatchItem,
  BatchStatus,
  EnteredValues,
  PortalAuthorizationRecord,
  RpaBatchRecord,
  RpaRunRecord,
  RunKind,
  RunOutcome,
  RunScreenshot,
  RunStatus,
  RunStep,
} from '#lib/rpa/run-store';
import { attr, defineEntity } from './define-entity.ts';
import { requestEntity } from './request.ts';

/**
 * An automation run, in its request's item collection: the scraper session lists a request's latest
 * runs with one Query, newest first, because run ids are UUIDv7 (time-ordered).
 */
export const rpaRunEntity = defineEntity<RpaRunRecord>()({
  name: 'RpaRun',
  keys: { pk: requestEntity.keys.pk.template, sk: 'RPA#<runId>' },
  attributes: {
    clientId: attr.string(),
    externalId: attr.string(),
    runId: attr.string(),
    kind: attr.string<RunKind>(),
    batchId: attr.optional(attr.string()),
    clientUserId: attr.string(),
    organizationId: attr.string(),
    portalAccountId: attr.optional(attr.string()),
    portalId: attr.optional(attr.string()),
    status: attr.string<RunStatus>(),
    outcome: attr.optional(attr.string<RunOutcome>()),
    steps: attr.list<RunStep>(),
    // A JSON string: the fields keep the order the portal's form has them in. Runs recorded before
    // read-back was checked hold `{field: string}`: enteredValuesFromStored reads them as well.
    enteredValues: {
      ...attr.json<EnteredValues>(),
      read: (stored: string) => enteredValuesFromStored(JSON.parse(stored)),
    },
    screenshots: attr.list<RunScreenshot>(),
    authorization: attr.optional(attr.map<PortalAuthorizationRecord>()),
    executionArn: attr.optional(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** A check-auth-status batch: its items name each request's run (at most 25). */
export const rpaBatchEntity = defineEntity<RpaBatchRecord>()({
  name: 'RpaBatch',
  keys: { pk: 'CLIENT#<clientId>#RPABATCH#<batchId>', sk: 'BATCH' },
  attributes: {
    clientId: attr.string(),
    batchId: attr.string(),
    clientUserId: attr.string(),
    organizationId: attr.string(),
    items: attr.list<BatchItem>(),
    status: attr.string<BatchStatus>(),
    executionArn: attr.optional(attr.string()),
    finishedAt: attr.optional(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/**
 * One automation login at a time per portal account: the lease, in the account's item collection
 * (docs/rpa.md, "No lockouts"). `expiration` lets DynamoDB's TTL sweep a lease a crashed worker left;
 * until it does, `expiresAt` already lets the next holder take it.
 */
export const portalAccountLeaseEntity = defineEntity<PortalAccountLease>()({
  name: 'PortalAccountLease',
  keys: { pk: 'CLIENT#<clientId>#PACC#<portalAccountId>', sk: 'LEASE' },
  attributes: {
    clientId: attr.string(),
    portalAccountId: attr.string(),
    holder: attr.string(),
    expiresAt: attr.string(),
    expiration: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
