import {
  checkAuthStatusStateMachineArn,
  submitToPayerStateMachineArn,
  viewOnPageStateMachineArn,
} from '#lib/config/resources';
import type { AutomationMachine } from './automation-starter.ts';

/** Where each state machine is: set by the CDK app (the automation stack) and by the local stack. */
export const stateMachineArnOf: Record<AutomationMachine, () => string> = {
  'view-on-page': viewOnPageStateMachineArn,
  'check-auth-status': checkAuthStatusStateMachineArn,
  submit: submitToPayerStateMachineArn,
};
