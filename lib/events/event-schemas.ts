import { AUTHORIZATION_STATUSES, DECISION_LIMITS, DUE_BY_PATTERN } from '#lib/entities/request';
import { RUN_OUTCOMES, type RunKind } from '#lib/entities/rpa';
import {
  type AuthorizationState,
  EVENT_TYPES,
  type EventData,
  type EventType,
  type ItemReasonCodes,
  type payloadOf,
  type ReasonCode,
  type RequestedInformationCode,
} from '#lib/entities/service-event';
import {
  closed,
  type JsonSchema,
  type Members,
  nullable,
  ref,
  string,
  timestamp,
  uuid,
} from '#lib/openapi/schema-builders';
import { ID_MAX_LENGTH, ID_PATTERN } from '#lib/validation/schemas/common';
import { EVENT_ID_PATTERN } from './events.ts';

/**
 * Each event's payload, as a webhook's body delivers it (payloadOf), as an exact, closed JSON Schema
 * (OpenAPI 3.1): listed under the OpenAPI document's `webhooks` (lib/openapi/document.ts) and its
 * components. Members are typed against service-event.ts (`satisfies Members<…>`), so tsc fails when
 * a shape changes without its schema; enums come from the code's constants.
 */

const count = (description: string) => ({ type: 'integer', minimum: 0, description });

/** Every kind, checked by tsc: a kind added to RunKind and not here fails it. */
const RUN_KINDS = Object.keys({ 'view-on-page': true, 'check-auth-status': true, submit: true } satisfies Record<
  RunKind,
  true
>);
const requestExternalId = string("The request's externalId", {
  minLength: 1,
  maxLength: ID_MAX_LENGTH,
  pattern: ID_PATTERN,
});

/** An authorization as events and history entries show it: the decision, not when it was read. */
const authorizationStateSchema = closed(
  'AuthorizationState',
  'An authorization: its status, number and decision date',
  {
    status: string("not_submitted until the automation read a status (the portal's pended is pending)", {
      enum: [...AUTHORIZATION_STATUSES],
    }),
    number: nullable(string('The authorization number', { pattern: '^[A-Za-z0-9-]{1,50}$' })),
    decisionDate: nullable(string('The decision date', { format: 'date' })),
  } satisfies Members<AuthorizationState>,
);

/** A payer's reason as events name it: the code alone (its text may name the patient: GET the request for it). */
const reasonCodeSchema = closed('ReasonCode', "A payer's reason code, without its text", {
  system: nullable(string('The code system (X12 HCR reason codes on PAS)', { maxLength: 200 })),
  code: string('The reason code', { minLength: 1, maxLength: 64 }),
} satisfies Members<ReasonCode>);

const itemReasonCodesSchema = closed('ItemReasonCodes', 'An item of a denial or partial approval, and why in codes', {
  sequence: {
    type: 'integer',
    minimum: 1,
    description: "The item's sequence: the request's procedure at sequence − 1",
  },
  status: string("The payer's decision on it", {
    enum: ['approved', 'partially_approved', 'denied', 'pending', 'cancelled'],
  }),
  reasonCodes: {
    type: 'array',
    maxItems: DECISION_LIMITS.eventItemReasonCodes,
    description: `Its first ${DECISION_LIMITS.eventItemReasonCodes} reason codes (all of them, with the text: GET …/Requests/{externalId})`,
    items: ref('ReasonCode'),
  },
} satisfies Members<ItemReasonCodes>);

const requestedInformationCodeSchema = closed(
  'RequestedInformationCode',
  'One thing a payer asks for, as a code, without its text',
  {
    system: nullable(string('The code system: http://loinc.org for a LOINC attachment code', { maxLength: 200 })),
    code: string('The code', { minLength: 1, maxLength: 30 }),
    sequence: nullable({
      type: 'integer',
      minimum: 1,
      description: "The item it is about (the request's procedure at sequence − 1); null: the whole request",
    }),
  } satisfies Members<RequestedInformationCode>,
);

const data: { [T in EventType]: Members<EventData[T]> } = {
  'authorization.status_changed': {
    requestExternalId,
    previous: ref('AuthorizationState'),
    current: ref('AuthorizationState'),
    runId: nullable(uuid('The automation run that read the change; null when an API call changed it')),
    items: {
      type: 'array',
      maxItems: DECISION_LIMITS.items,
      description:
        'A change into denied or partially_approved read through the payer API: every item, in sequence order, with its reason codes; empty otherwise',
      items: ref('ItemReasonCodes'),
    },
    reasonCodes: {
      type: 'array',
      maxItems: DECISION_LIMITS.reasons,
      description:
        'A change into denied or partially_approved: the reason codes for the whole request (a payer may give its reasons only here); empty otherwise',
      items: ref('ReasonCode'),
    },
  },
  'authorization.decision_overdue': {
    requestExternalId,
    decisionDueAt: timestamp("The deadline that passed: the authorization's decisionDueAt"),
    status: string('The authorization status when it passed (undecided)', { enum: [...AUTHORIZATION_STATUSES] }),
  },
  'authorization.information_requested': {
    requestExternalId,
    dueBy: nullable(
      string('By when the payer wants it, as it wrote it (a date, or a date-time with its zone); null: not said', {
        maxLength: 40,
        pattern: DUE_BY_PATTERN,
      }),
    ),
    items: {
      type: 'array',
      minItems: 1,
      maxItems: DECISION_LIMITS.requestedInformation,
      description: 'What the payer asks for, in its order, as codes (the text is in GET …/Requests/{externalId})',
      items: ref('RequestedInformationCode'),
    },
  },
  'automation.run_finished': {
    requestExternalId,
    runId: uuid('The run (GET …/ServiceReviews/requests/{requestExternalId}/rpa/runs/{runId})'),
    kind: string('What the run did', { enum: [...RUN_KINDS] }),
    outcome: string('Why it ended as it did (docs/rpa.md, "Named outcomes")', { enum: [...RUN_OUTCOMES] }),
    batchId: nullable(uuid('The check-auth-status batch it belongs to')),
  },
  'automation.batch_finished': {
    batchId: uuid('The batch (GET …/rpa/batch/check-auth-status/{batchId})'),
    total: { type: 'integer', minimum: 1, description: 'Its requests, one run each' },
    counts: closed('AutomationBatchCounts', 'Its runs by how they ended', {
      succeeded: count('Runs that succeeded'),
      failed: count('Runs that failed (their outcome says why)'),
    } satisfies Members<EventData['automation.batch_finished']['counts']>),
  },
  'webhook.test': { webhookId: string('The subscription the test was sent to') },
};

/** Each event type: its component's name and what it tells. */
export const EVENT_DOCS: Record<EventType, { schema: string; summary: string; description: string }> = {
  'authorization.status_changed': {
    schema: 'AuthorizationStatusChangedEvent',
    summary: "A request's authorization changed",
    description:
      'Its status, number or decision date changed (a status check read a new answer): before and after, the run that read it, and for a denial or partial approval the reason codes per item and for the whole (codes only: the text is in GET …/Requests/{externalId}).',
  },
  'authorization.decision_overdue': {
    schema: 'AuthorizationDecisionOverdueEvent',
    summary: "A request's decision deadline passed undecided",
    description:
      "The payer's decision deadline (authorization.decisionDueAt: 72 hours urgent, 7 days standard after the PAS submission) passed with the request still undecided. Sent once per deadline.",
  },
  'authorization.information_requested': {
    schema: 'AuthorizationInformationRequestedEvent',
    summary: 'The payer asks for more information before it decides',
    description:
      "A pended answer asks for documentation (PAS: its CommunicationRequests, LOINC attachment codes): the codes, the items they are about and the due date, without the payer's words (GET …/Requests/{externalId} shows authorization.informationRequested). Sent once per new request: the same one read again sends nothing.",
  },
  'automation.run_finished': {
    schema: 'AutomationRunFinishedEvent',
    summary: 'An automation run finished',
    description: 'A view-on-page or check-auth-status run ended, succeeded or failed: its outcome says why.',
  },
  'automation.batch_finished': {
    schema: 'AutomationBatchFinishedEvent',
    summary: 'A check-auth-status batch finished',
    description: 'Every run of the batch ended: how many succeeded and how many failed.',
  },
  'webhook.test': {
    schema: 'WebhookTestEvent',
    summary: 'A test delivery',
    description: 'Sent on request (POST …/Webhooks/{id}/test), to check that a receiver gets and verifies deliveries.',
  },
};

const payloadSchemaOf = (type: EventType): JsonSchema =>
  closed(EVENT_DOCS[type].schema, EVENT_DOCS[type].description, {
    id: string('Unique; the webhook-id of every delivery of it (de-duplicate on it)', { pattern: EVENT_ID_PATTERN }),
    type: string('The event type', { const: type }),
    occurredAt: string('When the change happened (UTC)', { format: 'date-time' }),
    data: closed(`${EVENT_DOCS[type].schema}Data`, 'Ids, codes and statuses only: never patient data', data[type]),
  } satisfies Members<ReturnType<typeof payloadOf>>);

/** The component schemas: AuthorizationState, the reason codes, and one per event type. */
export const eventSchemas: Record<string, JsonSchema> = {
  AuthorizationState: authorizationStateSchema,
  ReasonCode: reasonCodeSchema,
  ItemReasonCodes: itemReasonCodesSchema,
  RequestedInformationCode: requestedInformationCodeSchema,
  ...Object.fromEntries(EVENT_TYPES.map((type) => [EVENT_DOCS[type].schema, payloadSchemaOf(type)])),
};
