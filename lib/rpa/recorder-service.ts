import { dynamoRunStore } from './dynamo-run-store.ts';
import { runRecorder } from './worker.ts';

/**
 * The recorders (RecordRunFailure, FinishBatch) on DynamoDB: only the run store, so their
 * functions bundle no browser, portal driver, Encryption SDK or S3 (worker-service.ts has those).
 */
export const recorder = runRecorder({ runs: dynamoRunStore });
