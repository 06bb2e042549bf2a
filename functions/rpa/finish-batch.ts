import { observed } from '#lib/observability/invocation';
import { recorder } from '#lib/runs/recorder-service';

/** FinishBatch (after the batch's Map): marks the batch done. Ids in, ids out (docs/rpa.md). */
export const handler = observed('FinishBatch', (input: unknown) => recorder.finishBatch(input));
