import { observed } from '#lib/observability/invocation';
import { executionEnded } from '#lib/runs/recorder-service';

/**
 * RecordExecutionEnded (an EventBridge rule on the state machines' "Step Functions Execution Status
 * Change" events: TIMED_OUT, ABORTED, FAILED): fails the execution's runs that never ended, each with
 * the outcome the execution's end names, and closes a batch (docs/rpa.md). Ids in, a count out.
 */
export const handler = observed('RecordExecutionEnded', (event: unknown) => executionEnded.recordExecutionEnded(event));
