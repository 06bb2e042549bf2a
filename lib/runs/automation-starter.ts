/** Port: the automation's executions (Step Functions on AWS and locally; a test double in unit tests). */
export type AutomationMachine = 'view-on-page' | 'check-auth-status' | 'submit';

/** Step Functions' execution statuses. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';

export interface AutomationStarter {
  /**
   * Starts `machine` with `input` (ids only, never secrets) as the execution `name` (a run or batch
   * id, so a repeated start of the same name and input is the same execution); its ARN.
   */
  start(machine: AutomationMachine, name: string, input: Record<string, unknown>): Promise<string>;
  /** The execution's status; undefined when it does not exist (ExecutionDoesNotExist). */
  describe(executionArn: string): Promise<{ status: ExecutionStatus } | undefined>;
}
