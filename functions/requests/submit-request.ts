import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { pathId } from '#lib/http/path';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { submissions } from '#lib/payer-api/submission-service';
import type { SubmitBody } from '#lib/payer-api/submission-start';
import { submitRequestValidator } from '#lib/validation/generated/per-schema/submit-request';

/**
 * POST /api/external/v1.1/Requests/{externalId}/submit {clientUserId, payerConnectionExternalId?, dryRun?,
 * attachmentIds?} → 202 {runId, status} and the run's Location: the request goes to its payer's
 * prior-authorization API (Da Vinci PAS `Claim/$submit`) through the organization's payer connection, as
 * an update of the claim the payer holds when there is one (denied: 422). A payer without an API →
 * 422 `no_payer_api`; a request missing what PAS needs → 422 listing each field's path, nothing sent;
 * `dryRun: true` → 200 {bundle, problems}, nothing sent. Idempotent with an Idempotency-Key header.
 */
export const handler = endpoint<SubmitBody>(
  async (event) => {
    const externalId = pathId(event, 'externalId');
    const started = await submissions.start(scopeOf(event), externalId, event.body);
    if ('dryRun' in started) return json(200, { bundle: started.bundle, problems: started.problems });
    const { run } = started;
    return json(
      202,
      { runId: run.runId, status: run.status },
      { Location: resourceUrl(event, 'rpa/get-rpa-run', { requestExternalId: externalId, runId: run.runId }) },
    );
  },
  { json: { validator: submitRequestValidator, absentBody: {} }, idempotency: idempotentRequests() },
);
