import { observed } from '#lib/observability/invocation';
import { runCredentials } from '#lib/portal/run-credentials-service';

/**
 * IssueRunCredentials: invoked by a browser worker (FillPortalForm, CheckPortalStatus) with ids only,
 * `{clientId, requestExternalId, runId, portalAccountId, attempt}`; answers that run's portal
 * credentials once per attempt, or fails with CredentialsRefused and a fixed reason (docs/rpa.md).
 */
export const handler = observed('IssueRunCredentials', (input: unknown) => runCredentials.issue(input));
