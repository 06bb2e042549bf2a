import { DECISION_LIMITS } from '#lib/entities/request';
import { closed, type JsonSchema, type Members, nullable, ref, uuid } from '#lib/openapi/schema-builders';
import type { AuthorizationHistoryPage } from '#lib/requests/authorization-history';
import { MAX_HISTORY_PAGE_SIZE } from '#lib/requests/authorization-history';

/**
 * A request's authorization history as clients read it (GET …/Requests/{externalId}/authorization/history):
 * exact, closed, and typed against the service's answer (`satisfies Members<…>`). The authorization
 * before and after is the events' AuthorizationState (lib/events/event-schemas.ts).
 */
type Entry = AuthorizationHistoryPage['items'][number];

const decisionItem = closed('AuthorizationChangeItem', 'An item of a denial or partial approval, and why', {
  sequence: {
    type: 'integer',
    minimum: 1,
    description: "The item's sequence: the request's procedure at sequence − 1",
  },
  status: {
    type: 'string',
    enum: ['approved', 'partially_approved', 'denied', 'pending', 'cancelled'],
    description: "The payer's decision on it",
  },
  reasons: { type: 'array', maxItems: DECISION_LIMITS.itemReasons, items: ref('AuthorizationReason') },
} satisfies Members<Entry['items'][number]>);

const changedBy = {
  oneOf: [
    closed('ChangedByRun', 'An automation run read the change on the payer portal', {
      kind: { type: 'string', const: 'run' },
      runId: {
        anyOf: [
          uuid('The run (GET …/ServiceReviews/requests/{requestExternalId}/rpa/runs/{runId})'),
          { type: 'null', description: "A run of another organization than the API key's" },
        ],
      },
    }),
    closed('ChangedByApiCall', 'An API call changed it', {
      kind: { type: 'string', const: 'api' },
      requestId: { type: 'string', minLength: 1, description: "The call's request id, as the audit trail names it" },
    }),
    closed(
      'ChangedByDeadline',
      "The payer's decision deadline passed with the request undecided: nothing changed (previous and current are the same), the entry records when (changedAt) and which deadline",
      {
        kind: { type: 'string', const: 'deadline' },
        decisionDueAt: {
          type: 'string',
          format: 'date-time',
          description: "The authorization's decisionDueAt that passed",
        },
      },
    ),
  ],
};

export const authorizationHistorySchemas: Record<string, JsonSchema> = {
  AuthorizationChange: closed('AuthorizationChange', 'One change of the authorization', {
    changeId: uuid('A UUIDv7'),
    changedAt: { type: 'string', format: 'date-time', description: 'When it changed' },
    previous: ref('AuthorizationState'),
    current: ref('AuthorizationState'),
    changedBy,
    items: {
      type: 'array',
      maxItems: DECISION_LIMITS.items,
      description:
        "A change into denied or partially_approved read through the payer API: every item of `current`, in sequence order, with the payer's reasons; empty otherwise (and on entries from before the history kept them)",
      items: decisionItem,
    },
    reasons: {
      type: 'array',
      maxItems: DECISION_LIMITS.reasons,
      description:
        "A change into denied or partially_approved: the payer's reasons for the whole request (a payer may give them only here); empty otherwise",
      items: ref('AuthorizationReason'),
    },
    informationRequested: nullable(ref('InformationRequested')),
  } satisfies Members<Entry>),
  AuthorizationHistoryPage: closed('AuthorizationHistoryPage', 'A page of the history, newest first', {
    items: { type: 'array', maxItems: MAX_HISTORY_PAGE_SIZE, items: ref('AuthorizationChange') },
    pageSize: { type: 'integer', minimum: 1, maximum: MAX_HISTORY_PAGE_SIZE, description: 'Entries per page' },
    nextCursor: {
      anyOf: [{ type: 'string', description: 'Signed; send it back as cursor for the next page' }, { type: 'null' }],
    },
  } satisfies Members<AuthorizationHistoryPage>),
};
