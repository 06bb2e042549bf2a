import type { AutomationMachine, ExecutionStatus } from './automation-starter.ts';

/**
 * Port: an execution of the automation's state machines, read by its machine and name (a run's id,
 * or a batch's). The run credentials function checks with it that a run it is asked about is one an
 * execution started by the API is working on: something the browser workers, which may write runs,
 * cannot forge (they cannot start executions). Adapter: sfn-execution-reader.ts.
 */
export interface ExecutionReader {
  /** Its status and input (JSON text, ids only), or undefined when no such execution exists. */
  read(machine: AutomationMachine, name: string): Promise<{ status: ExecutionStatus; input: string } | undefined>;
}
