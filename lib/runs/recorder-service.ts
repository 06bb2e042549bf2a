import {
  checkAuthStatusStateMachineArn,
  submitToPayerStateMachineArn,
  viewOnPageStateMachineArn,
} from '#lib/config/resources';
import { flightLandings } from './automation-quotas.ts';
import type { AutomationMachine } from './automation-starter.ts';
import { dynamoAutomationUsage } from './dynamo-automation-usage.ts';
import { dynamoRunStore } from './dynamo-run-store.ts';
import { executionEndedRecorder } from './execution-ended.ts';
import { runRecorder } from './run-recorder.ts';

/**
 * The recorders (RecordRunFailure, FinishBatch, RecordExecutionEnded) on DynamoDB: only the run
 * store, so their functions bundle no browser, portal driver, Encryption SDK or S3 (worker-service.ts
 * has those).
 */
export const recorder = runRecorder({ runs: dynamoRunStore, flights: flightLandings(dynamoAutomationUsage) });

/** Which state machine an execution-status event is about: the ARNs the stack (or the local one) configures. */
const machineOf = (stateMachineArn: string): AutomationMachine | undefined => {
  if (stateMachineArn === viewOnPageStateMachineArn()) return 'view-on-page';
  if (stateMachineArn === checkAuthStatusStateMachineArn()) return 'check-auth-status';
  if (stateMachineArn === submitToPayerStateMachineArn()) return 'submit';
  return undefined;
};

export const executionEnded = executionEndedRecorder({ runs: dynamoRunStore, machineOf });
