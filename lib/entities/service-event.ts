import type { AuthorizationItem, AuthorizationStatus } from './request.ts';
import type { RunKind, RunOutcome } from './rpa.ts';

/**
 * The events the service tells clients about: what a webhook delivers and what the outbox holds, so
 * that a client learns of a change without polling (docs/events.md). Ids, codes and statuses only:
 * never patient data, never a file name or a portal username.
 * Each type has a JSON Schema (lib/events/event-schemas.ts) listed under the OpenAPI document's
 * `webhooks`; this module is the one place their shapes are declared.
 */
export const EVENT_TYPES = [
  'authorization.status_changed',
  'authorization.decision_overdue',
  'authorization.information_requested',
  'automation.run_finished',
  'automation.batch_finished',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An authorization as an event shows it: no more than the request's representation says. */
export interface AuthorizationState {
  status: AuthorizationStatus;
  number: string | null;
  decisionDate: string | null;
}

/** A payer's reason as an event names it: its code, never its text (a payer's words may name the patient). */
export interface ReasonCode {
  system: string | null;
  code: string;
}

/** An item of a denial or partial approval as an event shows it: how it was decided, and why in codes. */
export interface ItemReasonCodes {
  /** The Claim item's sequence: the request's procedure at sequence − 1. */
  sequence: number;
  status: AuthorizationItem['status'];
  reasonCodes: ReasonCode[];
}

/** One thing a payer asks for, as an event names it: the code and the item, never the payer's words. */
export interface RequestedInformationCode {
  system: string | null;
  code: string;
  sequence: number | null;
}

export interface EventData {
  'authorization.status_changed': {
    requestExternalId: string;
    previous: AuthorizationState;
    current: AuthorizationState;
    /** The automation run that read the change; null when an API call changed it. */
    runId: string | null;
    /** A change into denied or partially_approved: its items and why (codes only); empty otherwise. */
    items: ItemReasonCodes[];
    /** A change into denied or partially_approved: the reasons for the whole (codes only); empty otherwise. */
    reasonCodes: ReasonCode[];
  };
  'authorization.decision_overdue': {
    requestExternalId: string;
    /** The deadline that passed (the request's `authorization.decisionDueAt`). */
    decisionDueAt: string;
    /** The authorization's status when it passed: undecided. */
    status: AuthorizationStatus;
  };
  'authorization.information_requested': {
    requestExternalId: string;
    /** By when the payer wants it (its date or date-time); null: not said. */
    dueBy: string | null;
    /** What it asks for, as codes (the payer's words are in the API only). */
    items: RequestedInformationCode[];
  };
  'automation.run_finished': {
    requestExternalId: string;
    runId: string;
    kind: RunKind;
    outcome: RunOutcome;
    batchId: string | null;
  };
  'automation.batch_finished': {
    batchId: string;
    total: number;
    /** How many of its runs ended in each status: `total` when every run ended (a closed batch's have). */
    counts: Record<'succeeded' | 'failed', number>;
  };
  'webhook.test': { webhookId: string };
}

export interface ServiceEvent<T extends EventType = EventType> {
  /** `evt_<UUIDv7>`: unique, sorts by creation; the webhook-id of its deliveries (de-duplication). */
  id: string;
  type: T;
  /** Whose event it is: only this client's subscriptions receive it. Not part of the delivered payload. */
  clientId: string;
  /**
   * The organization it concerns, when it has one (a run's or a batch's: the organization of the client
   * user it ran for). A subscription made with an organization-restricted key receives the events of its
   * organization and those without one (a request belongs to the client); never another organization's.
   * Not part of the delivered payload (docs/webhooks.md, "Who receives what").
   */
  organizationId?: string;
  /**
   * The organization of the run an `authorization.status_changed` names (`data.runId`). The event itself has
   * no organization (a request belongs to the client), so every subscription of the client receives it; one
   * restricted to another organization receives `runId: null` (webhookPayloadOf). Not part of the payload.
   */
  runOrganizationId?: string;
  /** When the change happened (ISO 8601, UTC). */
  occurredAt: string;
  data: EventData[T];
}

/** The event as a webhook's body shows it: without the routing fields. */
export const payloadOf = <T extends EventType>({ id, type, occurredAt, data }: ServiceEvent<T>) => ({
  id,
  type,
  occurredAt,
  data,
});
