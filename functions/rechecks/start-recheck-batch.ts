import { observed } from '#lib/observability/invocation';
import { recheckGroupOf } from '#lib/rechecks/rechecks';
import { rechecks } from '#lib/rechecks/service';

/**
 * StartRecheckBatch (one per group, in the state machine's Map): starts a check-auth-status batch as
 * the group's client user → {batchId}, null when it was refused (logged; the requests wait their turn).
 */
export const handler = observed('StartRecheckBatch', (input: unknown) => rechecks.startGroup(recheckGroupOf(input)));
