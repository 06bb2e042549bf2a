import type { StateMachine, StateMachineDefinition } from 'aws-local-stepfunctions';
import type { AutomationTaskName, DefinitionOptions, StateMachineKey } from '#lib/runs/state-machines';
import { ACCOUNT, REGION } from '../arns.ts';
import type { HandlerLoader } from '../gateway/invoke.ts';

/* The local Step Functions' records: executions, their history, the state machines, the errors it answers. */

export const stateMachineArnOf = (name: string) => `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
export const executionArnOf = (machine: string, name: string) =>
  `arn:aws:states:${REGION}:${ACCOUNT}:execution:${machine}:${name}`;

type Status = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export interface HistoryEvent {
  timestamp: number;
  /** Orders events of one millisecond as AWS would: entered, scheduled, finished, exited. */
  rank: number;
  type: string;
  details: Record<string, unknown>;
}

export interface Execution {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  status: Status;
  startDate: Date;
  stopDate?: Date;
  output?: string;
  error?: string;
  cause?: string;
  history: HistoryEvent[];
  abort(): void;
  /** Resolves once the status is final and the history complete. */
  settled: Promise<void>;
}

export interface Machine {
  key: StateMachineKey;
  name: string;
  arn: string;
  definition: StateMachineDefinition;
  /** The seconds each Task state waits for its function (the local Lambda context's deadline). */
  taskTimeouts: Record<string, number>;
}

export type HistoryEntry = Omit<HistoryEvent, 'timestamp'>;

/** An error in the AWS JSON shape; `type` becomes the SDK's exception name. */
export class ServiceError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export const json = (value: unknown) => JSON.stringify(value ?? null);
export const epochSeconds = (date: Date) => date.getTime() / 1000;

export interface StepFunctionsOptions {
  loadHandler: HandlerLoader;
  port?: number;
  host?: string;
  /** Shorter Task and execution timeouts (tests). */
  definitionOptions?: DefinitionOptions;
  /** Replaces every Retry's wait (milliseconds), keeping its MaxAttempts (tests). */
  retryIntervalMs?: number;
  /** Invocations of each browser function at once (default BROWSER_CONCURRENCY, its reserved concurrency on AWS). */
  browserConcurrency?: number;
}

/** The emulator's state: its machines, its executions, and what is under way. */
export interface Emulator {
  options: StepFunctionsOptions;
  /** By ARN. */
  machines: Map<string, Machine>;
  /** The library's machine per ARN, validated once. */
  stateMachines: Map<string, StateMachine>;
  executions: Map<string, Execution>;
  browserConcurrency: number;
  /** Invocations under way, per browser function (they hold their slot until the handler returns, as on Lambda). */
  browsersInUse: Map<AutomationTaskName, number>;
  /** Event deliveries under way (close() waits for them). */
  deliveries: Set<Promise<unknown>>;
  closing: boolean;
}
