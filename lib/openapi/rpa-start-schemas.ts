import type { RunStatus } from '#lib/entities/rpa';
import {
  closed,
  everyOf,
  identifier,
  type JsonSchema,
  type Members,
  oneOf,
  ref,
  string,
  uuid,
} from '#lib/openapi/schema-builders';
import { BATCH_REFUSAL_REASONS } from '#lib/runs/errors';
import { MAX_BATCH_ITEMS } from '#lib/runs/run-limits';
import type { RefusedRequest } from '#lib/runs/run-start';

/**
 * What a start of the automation answers (docs/rpa.md, docs/payer-api.md): a run, a batch (with the
 * requests a partial one refused) or a submission, queued and its execution started. Exact and closed,
 * as the rest of rpa-schemas.ts, which serves them with its own. Imported at build time only.
 */

export const RUN_STATUSES = everyOf<RunStatus>()(['queued', 'running', 'succeeded', 'failed']);

/** Step Functions' own id of the execution: opaque here. */
export const executionArn = (description: string) => string(description);

export const rpaStartSchemas: Record<string, JsonSchema> = {
  RunStarted: closed('RunStarted', 'A view-on-page run, queued and its execution started', {
    runId: uuid('The run (Location: …/rpa/runs/{runId})'),
    executionId: executionArn("Its Step Functions execution's ARN"),
    status: oneOf(RUN_STATUSES, 'queued, unless the worker already took it up'),
  }),
  BatchStarted: closed(
    'BatchStarted',
    'A check-auth-status batch, its runs queued and its execution started',
    {
      batchId: uuid('The batch (Location: …/rpa/batch/check-auth-status/{batchId})'),
      executionId: executionArn("Its Step Functions execution's ARN"),
      total: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_BATCH_ITEMS,
        description: 'Its requests, one run each (with partial: those started)',
      },
      requests: {
        type: 'array',
        maxItems: MAX_BATCH_ITEMS - 1,
        description:
          'Only when the body said `partial: true`: the requests not started, in the order sent, each with its reason (empty when all started)',
        items: ref('RefusedRequest'),
      },
    },
    ['requests'],
  ),
  RefusedRequest: closed('RefusedRequest', 'A request a partial batch did not start, and why', {
    requestExternalId: identifier('The request'),
    reason: oneOf(
      BATCH_REFUSAL_REASONS,
      'request_not_found: no such request; the others: why no portal account can be chosen for it (docs/rpa.md, "Choosing the portal account")',
    ),
  } satisfies Members<RefusedRequest>),
  SubmissionStarted: closed('SubmissionStarted', "A submission to the payer's API, queued and its execution started", {
    runId: uuid('The submit run (GET …/ServiceReviews/requests/{requestExternalId}/rpa/runs/{runId})'),
    status: oneOf(RUN_STATUSES, 'queued, or already further'),
  }),
};
