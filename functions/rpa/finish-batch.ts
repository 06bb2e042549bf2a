import { observed } from '#lib/observability/invocation';
import { worker } from '#lib/rpa/worker-service';

/** FinishBatch (after the batch's Map): marks the batch done. Ids in, ids out (docs/rpa.md). */
export const handler = observed('FinishBatch', (input: unknown) => worker.finishBatch(input));
