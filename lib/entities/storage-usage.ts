import { attr, defineEntity } from './define-entity.ts';
import { clientEntity } from './tenancy.ts';

/** What a client stores, counted (the port: lib/tenancy/storage-usage.ts). */
export interface AttachmentBytesUsage {
  clientId: string;
  /** Sum of the declared sizes of the client's attachment records (uploads in flight included). */
  attachmentBytes: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface PortalAccountsUsage {
  clientId: string;
  organizationId: string;
  /** Portal accounts of the organization. */
  portalAccounts: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface PayerConnectionsUsage {
  clientId: string;
  organizationId: string;
  /** Payer connections of the organization. */
  payerConnections: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** The automation quotas' counters (the port: lib/runs/automation-quotas.ts). */
export interface AutomationRunsUsage {
  clientId: string;
  /** `H#<yyyy-mm-ddThh>` or `D#<yyyy-mm-dd>`, UTC. */
  window: string;
  runs: number;
  /** Epoch seconds (TTL): a day after the window ends. */
  expiration: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** The runs a client has in flight, counted (lib/runs/automation-quotas.ts): one item per client. */
export interface AutomationRunsInFlight {
  clientId: string;
  /** The runs of the flights counted in; at least the runs of the client's live flights. */
  runs: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface AutomationFlight {
  clientId: string;
  executionName: string;
  runs: number;
  /** Its execution's timeout: past it, nothing of it runs. */
  until: string;
  expiration: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/*
 * Counters behind the storage quotas (lib/tenancy/storage-quotas.ts): created by their first
 * conditional UpdateItem, never written whole, in the client's own partition beside its Client item.
 */

/** The bytes of attachments a client keeps: one item per client. */
export const attachmentBytesUsageEntity = defineEntity<AttachmentBytesUsage>()({
  name: 'AttachmentBytesUsage',
  keys: { pk: clientEntity.keys.pk.template, sk: 'USAGE#ATTACHMENTBYTES' },
  attributes: {
    clientId: attr.string(),
    attachmentBytes: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** The portal accounts of one organization: one item per organization. */
export const portalAccountsUsageEntity = defineEntity<PortalAccountsUsage>()({
  name: 'PortalAccountsUsage',
  keys: { pk: clientEntity.keys.pk.template, sk: 'USAGE#PACC#<organizationId>' },
  attributes: {
    clientId: attr.string(),
    organizationId: attr.string(),
    portalAccounts: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** The payer connections of one organization: one item per organization. */
export const payerConnectionsUsageEntity = defineEntity<PayerConnectionsUsage>()({
  name: 'PayerConnectionsUsage',
  keys: { pk: clientEntity.keys.pk.template, sk: 'USAGE#PCONN#<organizationId>' },
  attributes: {
    clientId: attr.string(),
    organizationId: attr.string(),
    payerConnections: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** Automation runs a client started in one hour or one UTC day (lib/runs/automation-quotas.ts); expires with it. */
export const automationRunsUsageEntity = defineEntity<AutomationRunsUsage>()({
  name: 'AutomationRunsUsage',
  keys: { pk: clientEntity.keys.pk.template, sk: 'USAGE#RPARUNS#<window>' },
  attributes: {
    clientId: attr.string(),
    window: attr.string(),
    runs: attr.number(),
    expiration: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/*
 * A client's automation in flight, in a partition of its own (`CLIENT#<clientId>#AUTOMATION#INFLIGHT`): its
 * starts and landings never share the client's partition (its Client item, users, webhooks, counters),
 * and the workers' access to it is one leading key.
 */
const automationPartition = 'CLIENT#<clientId>#AUTOMATION#INFLIGHT';

/** The runs of a client's executions in flight: the in-flight quota's counter, written with each flight. */
export const automationRunsInFlightEntity = defineEntity<AutomationRunsInFlight>()({
  name: 'AutomationRunsInFlight',
  keys: { pk: automationPartition, sk: 'RPAINFLIGHT' },
  attributes: {
    clientId: attr.string(),
    runs: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** One execution of a client's in flight: its runs, until it ends or its timeout passes. */
export const automationFlightEntity = defineEntity<AutomationFlight>()({
  name: 'AutomationFlight',
  keys: { pk: automationPartition, sk: 'RPAFLIGHT#<executionName>' },
  attributes: {
    clientId: attr.string(),
    executionName: attr.string(),
    runs: attr.number(),
    until: attr.string(),
    expiration: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
