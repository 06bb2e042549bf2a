import type { Context } from 'aws-lambda';
import { automationTasks } from '#lib/routes/automation-tasks';
import type { AutomationTaskName } from '#lib/runs/state-machines';
import { functionArnOf } from '../arns.ts';
import { type HandlerLoader, lambdaContext } from '../gateway/invoke.ts';
import { type Emulator, type HistoryEntry, json, type Machine } from './model.ts';

/*
 * A Task state's invocation of its automation task's handler, as Lambda would: a JSON copy of the
 * input, a Lambda context with the Task's deadline, a JSON result, a thrown error reported by its name;
 * a browser function beyond its reserved concurrency is throttled. Each step is recorded in the history.
 */

type RecordEvent = (event: HistoryEntry) => void;

/** What Lambda reports for a function error: errorType is the error's name, the cause its JSON report. */
const lambdaFailure = (errorType: string, errorMessage: string) => {
  const failure = new Error(JSON.stringify({ errorType, errorMessage }));
  failure.name = errorType;
  return failure;
};

function failed(record: RecordEvent, failure: Error): Error {
  record({
    rank: 5,
    type: 'LambdaFunctionFailed',
    details: { lambdaFunctionFailedEventDetails: { error: failure.name, cause: failure.message } },
  });
  return failure;
}

async function loadTaskHandler(em: Emulator, module: string, record: RecordEvent) {
  try {
    return await em.options.loadHandler(module);
  } catch (error) {
    throw failed(
      record,
      lambdaFailure('Runtime.ImportModuleError', `Cannot load functions/${module}: ${(error as Error).name}`),
    );
  }
}

/** A browser function's slot, or the throttle Lambda answers once its reserved concurrency is used up. */
function takeBrowserSlot(em: Emulator, task: AutomationTaskName, record: RecordEvent): void {
  const inUse = em.browsersInUse.get(task) ?? 0;
  if (inUse >= em.browserConcurrency) {
    // Lambda refuses the invoke before the function starts: its reserved concurrency is used up.
    const throttled = lambdaFailure('Lambda.TooManyRequestsException', 'Rate Exceeded.');
    record({
      rank: 5,
      type: 'LambdaFunctionStartFailed',
      details: { lambdaFunctionStartFailedEventDetails: { error: throttled.name, cause: throttled.message } },
    });
    throw throttled;
  }
  em.browsersInUse.set(task, inUse + 1);
}

export async function invokeTask(
  em: Emulator,
  machine: Machine,
  task: AutomationTaskName,
  input: unknown,
  record: RecordEvent,
) {
  const { handler: module, worker } = automationTasks.find((candidate) => candidate.name === task)!;
  const timeoutSeconds = machine.taskTimeouts[task] ?? 60;
  const event = json(input);
  record({
    rank: 3,
    type: 'LambdaFunctionScheduled',
    details: {
      lambdaFunctionScheduledEventDetails: {
        resource: functionArnOf(task),
        input: event,
        timeoutInSeconds: timeoutSeconds,
      },
    },
  });
  const handler: Awaited<ReturnType<HandlerLoader>> = await loadTaskHandler(em, module, record);
  if (worker === 'browser') takeBrowserSlot(em, task, record);
  record({ rank: 4, type: 'LambdaFunctionStarted', details: {} });
  const deadline = Date.now() + timeoutSeconds * 1000;
  const context: Context = {
    ...lambdaContext(task),
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    const output = json(await handler(JSON.parse(event), context));
    record({ rank: 5, type: 'LambdaFunctionSucceeded', details: { lambdaFunctionSucceededEventDetails: { output } } });
    // As Lambda does: the result the state machine gets is the JSON the handler returned.
    return JSON.parse(output);
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    throw failed(record, lambdaFailure(name, message));
  } finally {
    if (worker === 'browser') em.browsersInUse.set(task, (em.browsersInUse.get(task) ?? 1) - 1);
  }
}
