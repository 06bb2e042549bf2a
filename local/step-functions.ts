import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  StateMachine,
  type StateMachineDefinition,
} from 'aws-local-stepfunctions';
import { type AutomationTaskName, automationEventFunctions, automationTasks } from '#lib/routes';
import {
  BROWSER_CONCURRENCY,
  type DefinitionOptions,
  type StateMachineKey,
  stateMachineDefinitions,
  stateMachineNames,
  type TaskResources,
  taskStatesOf,
} from '#lib/rpa/state-machines';
import { ACCOUNT, functionArnOf, REGION } from './arns.ts';
import { type HandlerLoader, lambdaContext } from './gateway.ts';

/**
 * A local AWS Step Functions on loopback: the JSON 1.0 protocol (`POST /`, `X-Amz-Target:
 * AWSStepFunctions.<Op>`) for StartExecution, DescribeExecution, GetExecutionHistory,
 * StopExecution and ListExecutions, so handlers and tests use the real @aws-sdk/client-sfn. It runs
 * the definitions of lib/rpa/state-machines.ts with aws-local-stepfunctions (Retry, Catch, Map,
 * TimeoutSeconds as the definitions say), every Task bound to its automation task's handler,
 * invoked as Lambda would: a JSON copy of the input, a Lambda context, a JSON result, and a thrown
 * error reported by its name. State is in memory; nothing here is imported by functions/ or lib/.
 *
 * As EventBridge does on AWS, an execution that ends TIMED_OUT, ABORTED or FAILED is handed, as a
 * "Step Functions Execution Status Change" event, to the automation's event functions
 * (`automationEventFunctions`, invoked asynchronously); and each browser function runs at most
 * `browserConcurrency` invocations at once, as its reserved concurrency bounds it on AWS: one more is
 * throttled (`Lambda.TooManyRequestsException`), which the definitions retry.
 */
const stateMachineArnOf = (name: string) => `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
const executionArnOf = (machine: string, name: string) =>
  `arn:aws:states:${REGION}:${ACCOUNT}:execution:${machine}:${name}`;

/** AWS's limits on StartExecution's name (1–80 characters, none of these) and input (256 KiB). */
const INVALID_NAME = /[\s<>{}[\]?*"#%\\^|~`$&,;:/]|\p{Cc}/u;
const MAX_INPUT_BYTES = 256 * 1024;

type Status = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

interface HistoryEvent {
  timestamp: number;
  /** Orders events of one millisecond as AWS would: entered, scheduled, finished, exited. */
  rank: number;
  type: string;
  details: Record<string, unknown>;
}

interface Execution {
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

interface Machine {
  key: StateMachineKey;
  name: string;
  arn: string;
  definition: StateMachineDefinition;
  /** The seconds each Task state waits for its function (the local Lambda context's deadline). */
  taskTimeouts: Record<string, number>;
}

/** An error in the AWS JSON shape; `type` becomes the SDK's exception name. */
class ServiceError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** What Lambda reports for a function error: errorType is the error's name, the cause its JSON report. */
const lambdaFailure = (errorType: string, errorMessage: string) => {
  const failure = new Error(JSON.stringify({ errorType, errorMessage }));
  failure.name = errorType;
  return failure;
};

const json = (value: unknown) => JSON.stringify(value ?? null);

/** An event's details without the execution's data (`includeExecutionData: false`). */
const withoutData = (details: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(details).map(([key, value]) => {
      const { input: _input, output: _output, ...rest } = value as Record<string, unknown>;
      return [key, rest];
    }),
  );
const epochSeconds = (date: Date) => date.getTime() / 1000;

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

type EventLog = ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E> ? E : never;
type HistoryEntry = Omit<HistoryEvent, 'timestamp'>;

/** A map iteration's event, under AWS's details key (e.g. `mapIterationStartedEventDetails`). */
const mapIterationEvent = (event: Extract<EventLog, { parentState: unknown; index: number }>, rank: number) => ({
  rank,
  type: event.type,
  details: {
    [`${event.type.charAt(0).toLowerCase()}${event.type.slice(1)}EventDetails`]: {
      name: event.parentState.name,
      index: event.index,
    },
  },
});

/** The library's events as Step Functions history events (AWS has no event for a retry or a catch). */
const historyEventsOf = (event: EventLog, roleArn: string): HistoryEntry[] => {
  switch (event.type) {
    case 'ExecutionStarted':
      return [
        { rank: 0, type: event.type, details: { executionStartedEventDetails: { input: json(event.input), roleArn } } },
      ];
    case 'ExecutionSucceeded':
      return [
        { rank: 9, type: event.type, details: { executionSucceededEventDetails: { output: json(event.output) } } },
      ];
    case 'ExecutionFailed':
      return [
        {
          rank: 9,
          type: event.type,
          details: { executionFailedEventDetails: { error: event.Error, cause: String(event.Cause ?? '') } },
        },
      ];
    case 'ExecutionTimeout':
      return [{ rank: 9, type: 'ExecutionTimedOut', details: {} }];
    case 'ExecutionAborted':
      return [{ rank: 9, type: event.type, details: {} }];
    case 'StateEntered':
      return [
        {
          rank: 2,
          type: `${event.state.type}StateEntered`,
          details: { stateEnteredEventDetails: { name: event.state.name, input: json(event.state.input) } },
        },
      ];
    case 'StateExited':
      return [
        {
          rank: 6,
          type: `${event.state.type}StateExited`,
          details: { stateExitedEventDetails: { name: event.state.name, output: json(event.state.output) } },
        },
      ];
    case 'StateFailed':
      // A function's own failure is recorded where it is invoked; its timeout only shows here.
      if (event.state.type === 'Task' && event.Error === 'States.Timeout') {
        return [
          {
            rank: 5,
            type: 'LambdaFunctionTimedOut',
            details: { lambdaFunctionTimedOutEventDetails: { error: event.Error } },
          },
        ];
      }
      return event.state.type === 'Map' ? [{ rank: 5, type: 'MapStateFailed', details: {} }] : [];
    case 'MapIterationStarted':
      return [mapIterationEvent(event, 1)];
    case 'MapIterationSucceeded':
    case 'MapIterationFailed':
      return [mapIterationEvent(event, 7)];
    default:
      return [];
  }
};

/** An operation's JSON request; each operation checks the members it reads. */
type RequestBody = Record<string, unknown>;

/**
 * The constructor validates a definition (asl-validator), as CreateStateMachine would; that takes
 * about half a second, so a definition already validated in this process is not validated again.
 */
const validated = new Set<string>();
const stateMachineOf = (definition: StateMachineDefinition) => {
  const text = JSON.stringify(definition);
  const machine = new StateMachine(definition, { validationOptions: { noValidate: validated.has(text) } });
  validated.add(text);
  return machine;
};

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

export interface LocalStepFunctions {
  endpoint: string;
  stateMachineArns: Record<StateMachineKey, string>;
  /** What the API functions need: the SDK's endpoint variable and the two ARNs. */
  env: Record<string, string>;
  /**
   * Aborts running executions, then stops listening. Their end is not delivered as an event: like a
   * crash, closing loses them, and the next start fails their runs as lost (local/lost-runs.ts).
   */
  close(): Promise<void>;
}

export const startStepFunctions = async (options: StepFunctionsOptions): Promise<LocalStepFunctions> => {
  const resources = Object.fromEntries(automationTasks.map((task) => [task.name, functionArnOf(task.name)]));
  const machines = new Map<string, Machine>();
  for (const key of Object.keys(stateMachineDefinitions) as StateMachineKey[]) {
    const definition = stateMachineDefinitions[key](resources as TaskResources, options.definitionOptions);
    const taskTimeouts = Object.fromEntries(
      Object.entries(taskStatesOf(definition)).map(([name, state]) => [name, state.TimeoutSeconds as number]),
    );
    const name = stateMachineNames[key];
    const arn = stateMachineArnOf(name);
    machines.set(arn, { key, name, arn, definition: definition as StateMachineDefinition, taskTimeouts });
  }
  const stateMachines = new Map([...machines].map(([arn, machine]) => [arn, stateMachineOf(machine.definition)]));
  const executions = new Map<string, Execution>();
  const browserConcurrency = options.browserConcurrency ?? BROWSER_CONCURRENCY;
  /** Invocations under way, per browser function (they hold their slot until the handler returns, as on Lambda). */
  const browsersInUse = new Map<AutomationTaskName, number>();
  /** Event deliveries under way (close() waits for them). */
  const deliveries = new Set<Promise<unknown>>();
  let closing = false;

  /** EventBridge's part: an execution's end, to every event function whose trigger names its status. */
  const deliverStatusChange = (execution: Execution) => {
    if (closing) return;
    for (const fn of automationEventFunctions) {
      if (!(fn.trigger.executionStatusChange.statuses as readonly string[]).includes(execution.status)) continue;
      const delivery = options
        .loadHandler(fn.handler)
        .then((handler) => handler(statusChangeEvent(execution), lambdaContext(fn.name)))
        .catch((error: Error) => process.stderr.write(`local ${fn.name}: ${error.stack ?? String(error)}\n`))
        .finally(() => deliveries.delete(delivery));
      deliveries.add(delivery);
    }
  };

  const invokeTask = async (
    machine: Machine,
    task: AutomationTaskName,
    input: unknown,
    record: (event: HistoryEntry) => void,
  ) => {
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
    const fail = (failure: Error) => {
      record({
        rank: 5,
        type: 'LambdaFunctionFailed',
        details: { lambdaFunctionFailedEventDetails: { error: failure.name, cause: failure.message } },
      });
      return failure;
    };
    let handler: Awaited<ReturnType<HandlerLoader>>;
    try {
      handler = await options.loadHandler(module);
    } catch (error) {
      throw fail(
        lambdaFailure('Runtime.ImportModuleError', `Cannot load functions/${module}: ${(error as Error).name}`),
      );
    }
    const inUse = browsersInUse.get(task) ?? 0;
    if (worker === 'browser' && inUse >= browserConcurrency) {
      // Lambda refuses the invoke before the function starts: its reserved concurrency is used up.
      const throttled = lambdaFailure('Lambda.TooManyRequestsException', 'Rate Exceeded.');
      record({
        rank: 5,
        type: 'LambdaFunctionStartFailed',
        details: { lambdaFunctionStartFailedEventDetails: { error: throttled.name, cause: throttled.message } },
      });
      throw throttled;
    }
    if (worker === 'browser') browsersInUse.set(task, inUse + 1);
    record({ rank: 4, type: 'LambdaFunctionStarted', details: {} });
    const deadline = Date.now() + timeoutSeconds * 1000;
    const context: Context = {
      ...lambdaContext(task),
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    };
    try {
      const output = json(await handler(JSON.parse(event), context));
      record({
        rank: 5,
        type: 'LambdaFunctionSucceeded',
        details: { lambdaFunctionSucceededEventDetails: { output } },
      });
      return JSON.parse(output);
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      throw fail(lambdaFailure(name, message));
    } finally {
      if (worker === 'browser') browsersInUse.set(task, (browsersInUse.get(task) ?? 1) - 1);
    }
  };

  const start = (machine: Machine, name: string, input: string): Execution => {
    const history: HistoryEvent[] = [];
    const record = (event: HistoryEntry) => history.push({ timestamp: Date.now(), ...event });
    const executionArn = executionArnOf(machine.name, name);
    const taskResourceLocalHandlers = Object.fromEntries(
      automationTasks.map((task) => [
        task.name,
        (taskInput: unknown) => invokeTask(machine, task.name, taskInput, record),
      ]),
    );
    const retryIntervalOverrides =
      options.retryIntervalMs === undefined
        ? undefined
        : Object.fromEntries(Object.keys(machine.taskTimeouts).map((state) => [state, options.retryIntervalMs!]));
    const run = stateMachines.get(machine.arn)!.run(JSON.parse(input), {
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
    execution.settled = run.result
      .then(
        (output) => ({ status: 'SUCCEEDED' as const, output: json(output) }),
        (error: Error) => {
          if (error instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT' as const };
          if (error instanceof ExecutionAbortedError) return { status: 'ABORTED' as const };
          const cause = error instanceof ExecutionError ? (error.cause as Error) : error;
          return { status: 'FAILED' as const, error: cause.name, cause: cause.message };
        },
      )
      .then(async (outcome) => {
        const stopDate = new Date();
        await consumeHistory;
        // StopExecution may already have closed it, with its own error and cause.
        if (execution.status === 'RUNNING') Object.assign(execution, outcome, { stopDate });
        deliverStatusChange(execution);
      });
    return execution;
  };

  const machineFor = (arn: unknown) => {
    if (typeof arn !== 'string' || !arn.startsWith('arn:aws:states:'))
      throw new ServiceError('InvalidArn', `Invalid Arn: '${arn}'`);
    const machine = machines.get(arn);
    if (!machine) throw new ServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
    return machine;
  };
  const executionFor = (arn: unknown) => {
    if (typeof arn !== 'string' || !arn.startsWith('arn:aws:states:'))
      throw new ServiceError('InvalidArn', `Invalid Arn: '${arn}'`);
    const execution = executions.get(arn);
    if (!execution) throw new ServiceError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return execution;
  };
  const summaryOf = (execution: Execution) => ({
    executionArn: execution.executionArn,
    stateMachineArn: execution.stateMachineArn,
    name: execution.name,
    status: execution.status,
    startDate: epochSeconds(execution.startDate),
    ...(execution.stopDate ? { stopDate: epochSeconds(execution.stopDate) } : {}),
  });
  const page = <T>(items: T[], maxResults: unknown, nextToken: unknown, fallback: number) => {
    const offset = typeof nextToken === 'string' ? Number.parseInt(nextToken, 10) : 0;
    if (!Number.isInteger(offset) || offset < 0) throw new ServiceError('InvalidToken', 'Invalid token');
    const size = typeof maxResults === 'number' && maxResults > 0 ? Math.min(maxResults, 1000) : fallback;
    const next = offset + size < items.length ? String(offset + size) : undefined;
    return { items: items.slice(offset, offset + size), ...(next ? { nextToken: next } : {}) };
  };

  const operations: Record<string, (body: RequestBody) => unknown> = {
    StartExecution: (body) => {
      const machine = machineFor(body.stateMachineArn);
      const name = body.name ?? randomUUID();
      if (typeof name !== 'string' || name.length < 1 || name.length > 80 || INVALID_NAME.test(name)) {
        throw new ServiceError('InvalidName', `Invalid Name: '${name}'`);
      }
      const input = body.input ?? '{}';
      if (typeof input !== 'string' || Buffer.byteLength(input) > MAX_INPUT_BYTES) {
        throw new ServiceError('InvalidExecutionInput', 'Invalid execution input: at most 256 KiB of JSON');
      }
      try {
        JSON.parse(input);
      } catch {
        throw new ServiceError('InvalidExecutionInput', 'Invalid execution input: not JSON');
      }
      const executionArn = executionArnOf(machine.name, name);
      const existing = executions.get(executionArn);
      // As AWS (standard workflows): the same name and input while running is the same execution;
      // a closed execution's name, or another input, is refused.
      if (existing) {
        if (existing.status !== 'RUNNING' || existing.input !== input) {
          throw new ServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
        }
        return { executionArn, startDate: epochSeconds(existing.startDate) };
      }
      const execution = start(machine, name, input);
      executions.set(executionArn, execution);
      return { executionArn, startDate: epochSeconds(execution.startDate) };
    },
    DescribeExecution: (body) => {
      const execution = executionFor(body.executionArn);
      return {
        ...summaryOf(execution),
        input: execution.input,
        inputDetails: { included: true },
        ...(execution.output !== undefined ? { output: execution.output, outputDetails: { included: true } } : {}),
        ...(execution.error !== undefined ? { error: execution.error } : {}),
        ...(execution.cause !== undefined ? { cause: execution.cause } : {}),
      };
    },
    GetExecutionHistory: (body) => {
      const execution = executionFor(body.executionArn);
      const ordered = [...execution.history].sort((a, b) => a.timestamp - b.timestamp || a.rank - b.rank);
      const withData = body.includeExecutionData !== false;
      const events = ordered.map((event, index) => ({
        id: index + 1,
        previousEventId: index,
        timestamp: event.timestamp / 1000,
        type: event.type,
        ...(withData ? event.details : withoutData(event.details)),
      }));
      if (body.reverseOrder === true) events.reverse();
      const { items, nextToken } = page(events, body.maxResults, body.nextToken, 1000);
      return { events: items, ...(nextToken ? { nextToken } : {}) };
    },
    StopExecution: (body) => {
      const execution = executionFor(body.executionArn);
      if (execution.status === 'RUNNING') {
        Object.assign(execution, {
          status: 'ABORTED',
          stopDate: new Date(),
          ...(typeof body.error === 'string' ? { error: body.error } : {}),
          ...(typeof body.cause === 'string' ? { cause: body.cause } : {}),
        });
        execution.abort();
      }
      return { stopDate: epochSeconds(execution.stopDate!) };
    },
    ListExecutions: (body) => {
      const machine = machineFor(body.stateMachineArn);
      const matching = [...executions.values()]
        .filter((execution) => execution.stateMachineArn === machine.arn)
        .filter((execution) => !body.statusFilter || execution.status === body.statusFilter)
        .sort((a, b) => b.startDate.getTime() - a.startDate.getTime());
      const { items, nextToken } = page(matching, body.maxResults, body.nextToken, 100);
      return { executions: items.map(summaryOf), ...(nextToken ? { nextToken } : {}) };
    },
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        'Content-Type': 'application/x-amz-json-1.0',
        'Content-Length': Buffer.byteLength(text),
        'x-amzn-RequestId': randomUUID(),
      });
      res.end(text);
    };
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const target = String(req.headers['x-amz-target'] ?? '');
      const operation = target.startsWith('AWSStepFunctions.')
        ? operations[target.slice('AWSStepFunctions.'.length)]
        : undefined;
      if (req.method !== 'POST' || !operation)
        throw new ServiceError('UnknownOperationException', `Unknown operation: ${target}`);
      let body: RequestBody;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        throw new ServiceError('SerializationException', 'The request body is not JSON');
      }
      reply(200, operation(body));
    } catch (error) {
      if (error instanceof ServiceError) {
        reply(error.status, { __type: `com.amazonaws.swf.service.v2.model#${error.type}`, message: error.message });
      } else {
        process.stderr.write(`local step functions: ${(error as Error).stack ?? String(error)}\n`);
        reply(500, { __type: 'com.amazonaws.swf.service.v2.model#InternalFailure', message: 'Internal failure' });
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const arnOf = (key: StateMachineKey) => [...machines.values()].find((machine) => machine.key === key)!.arn;
  const stateMachineArns = { viewOnPage: arnOf('viewOnPage'), checkAuthStatus: arnOf('checkAuthStatus') };

  return {
    endpoint,
    stateMachineArns,
    env: {
      AWS_ENDPOINT_URL_SFN: endpoint,
      VIEW_ON_PAGE_STATE_MACHINE_ARN: stateMachineArns.viewOnPage,
      CHECK_AUTH_STATUS_STATE_MACHINE_ARN: stateMachineArns.checkAuthStatus,
    },
    close: async () => {
      closing = true;
      const running = [...executions.values()].filter((execution) => execution.status === 'RUNNING');
      for (const execution of running) execution.abort();
      await Promise.allSettled(running.map((execution) => execution.settled));
      await Promise.allSettled([...deliveries]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
