import { observed } from '#lib/observability/invocation';
import { recorder } from '#lib/runs/recorder-service';

/**
 * RecordRunFailure (the Catch of both browser tasks): marks the run failed, its outcome named from
 * the error's name (the error's message is never stored). Ids in, ids and the outcome out.
 */
export const handler = observed('RecordRunFailure', (input: unknown) => recorder.recordRunFailure(input));
