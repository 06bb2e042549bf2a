import { randomUUID } from 'node:crypto';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError } from 'aws-local-stepfunctions';
import { automationTasks } from '#lib/routes/automation-tasks';
import { automationEventFunctions } from '#lib/routes/event-functions';
import { ACCOUNT, REGION } from '../arns.ts';
import { lambdaContext } from '../gateway/invoke.ts';
import { historyEventsOf } from './history.ts';
import {
  type Emulator,
  type Execution,
  executionArnOf,
  type HistoryEntry,
  type HistoryEvent,
  json,
  type Machine,
} from './model.ts';
import { invokeTask } from './tasks.ts';

/*
 * An execution: run by aws-local-stepfunctions with every Task bound to its handler, its history
 * recorded, and its end handed to the automation's event functions as EventBridge would.
 */

/**
 * The EventBridge event of an execution's status change, as Step Functions sends it (source
 * `aws.states`; dates in epoch milliseconds; input and output as JSON strings).
 */
const statusChangeEvent = (execution: Execution) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Step Functions Execution Status Change',
  source: 'aws.states',
  account: ACCOUNT,
  time: (execution.stopDate ?? new Date()).toISOString(),
  region: REGION,
  resources: [execution.executionArn],
  detail: {
    executionArn: execution.executionArn,
    stateMachineArn: execution.stateMachineArn,
    name: execution.name,
    status: execution.status,
    startDate: execution.startDate.getTime(),
    stopDate: execution.stopDate?.getTime() ?? null,
    input: execution.input,
    output: execution.output ?? null,
    inputDetails: { included: true },
    outputDetails: execution.output === undefined ? null : { included: true },
    ...(execution.error !== undefined ? { error: execution.error } : {}),
    ...(execution.cause !== undefined ? { cause: execution.cause } : {}),
  },
});

/** EventBridge's part: an execution's end, to every event function whose trigger names its status. */
function deliverStatusChange(em: Emulator, execution: Execution): void {
  if (em.closing) return;
  for (const fn of automationEventFunctions) {
    if (!(fn.trigger.executionStatusChange.statuses as readonly string[]).includes(execution.status)) continue;
    const delivery = em.options
      .loadHandler(fn.handler)
      .then((handler) => handler(statusChangeEvent(execution), lambdaContext(fn.name)))
      .catch((error: Error) => process.stderr.write(`local ${fn.name}: ${error.stack ?? String(error)}\n`))
      .finally(() => em.deliveries.delete(delivery));
    em.deliveries.add(delivery);
  }
}

/** How the library's result ends the execution. */
function outcomeOf(result: Promise<unknown>) {
  return result.then(
    (output) => ({ status: 'SUCCEEDED' as const, output: json(output) }),
    (error: Error) => {
      if (error instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT' as const };
      if (error instanceof ExecutionAbortedError) return { status: 'ABORTED' as const };
      const cause = error instanceof ExecutionError ? (error.cause as Error) : error;
      return { status: 'FAILED' as const, error: cause.name, cause: cause.message };
    },
  );
}

export function startExecution(em: Emulator, machine: Machine, name: string, input: string): Execution {
  const history: HistoryEvent[] = [];
  const record = (event: HistoryEntry) => history.push({ timestamp: Date.now(), ...event });
  const executionArn = executionArnOf(machine.name, name);
  const taskResourceLocalHandlers = Object.fromEntries(
    automationTasks.map((task) => [
      task.name,
      (taskInput: unknown) => invokeTask(em, machine, task.name, taskInput, record),
    ]),
  );
  const { retryIntervalMs } = em.options;
  const retryIntervalOverrides =
    retryIntervalMs === undefined
      ? undefined
      : Object.fromEntries(Object.keys(machine.taskTimeouts).map((state) => [state, retryIntervalMs]));
  const run = em.stateMachines.get(machine.arn)!.run(JSON.parse(input), {
    overrides: { taskResourceLocalHandlers, ...(retryIntervalOverrides ? { retryIntervalOverrides } : {}) },
    context: { Execution: { Id: executionArn, Name: name } },
  });
  const roleArn = `arn:aws:iam::${ACCOUNT}:role/local-step-functions`;
  const consumeHistory = (async () => {
    for await (const event of run.eventLogs) {
      for (const entry of historyEventsOf(event, roleArn)) history.push({ timestamp: event.timestamp, ...entry });
    }
  })();
  const execution: Execution = {
    executionArn,
    stateMachineArn: machine.arn,
    name,
    input,
    status: 'RUNNING',
    startDate: new Date(),
    history,
    abort: run.abort,
    settled: Promise.resolve(),
  };
  execution.settled = outcomeOf(run.result).then(async (outcome) => {
    const stopDate = new Date();
    await consumeHistory;
    // StopExecution may already have closed it, with its own error and cause.
    if (execution.status === 'RUNNING') Object.assign(execution, outcome, { stopDate });
    deliverStatusChange(em, execution);
  });
  return execution;
}
