import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  GetExecutionHistoryCommand,
  InvalidExecutionInput,
  InvalidName,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ACCOUNTS_AT_ONCE } from '#lib/runs/state-machines';
import { type LocalStepFunctions, type StepFunctionsOptions, startStepFunctions } from '#local/step-functions';

/*
 * The local Step Functions through the real SDK client, running the real definitions. The task
 * handlers are small stand-ins injected through the loader (the real ones drive a browser): what
 * they do is decided by the request's id, like a fake portal, and every call is recorded.
 */
type Event = Record<string, string>;
const calls: Array<{ module: string; event: Event; context: Context }> = [];
const attempts = new Map<string, number>();
const held = new Map<string, () => void>();
let checking = 0;
let mostChecking = 0;

const named = (name: string, message: string) => Object.assign(new Error(message), { name });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The browser task's behaviour, by the request id's prefix. */
const portal = async (event: Event, outcome: string) => {
  const attempt = (attempts.get(event.runId!) ?? 0) + 1;
  attempts.set(event.runId!, attempt);
  const id = event.requestExternalId!;
  if (id.startsWith('FLAKY') && attempt <= 2) throw named('PortalUnavailable', 'the portal did not answer');
  if (id.startsWith('DOWN')) throw named('PortalUnavailable', 'the portal did not answer');
  if (id.startsWith('BROKEN')) throw named('PortalError', 'the portal showed a page nobody expected');
  if (id.startsWith('HANG')) return new Promise(() => undefined);
  if (id.startsWith('HOLD')) await new Promise<void>((resolve) => held.set(event.runId!, resolve));
  // More than ids and the outcome: the definitions keep the outcome only.
  return { outcome, portalPage: '<html>page of the portal</html>' };
};

const handlers: Record<string, (event: Event) => Promise<unknown>> = {
  'rpa/fill-portal-form': (event) => portal(event, 'form_filled'),
  // A batch's group of one account: two lookups per call, the rest left for the next call.
  'rpa/check-portal-status': async (event) => {
    checking++;
    mostChecking = Math.max(mostChecking, checking);
    try {
      // Long enough for every group the Map may run at once to be under way together, on a busy machine too.
      await sleep(200);
      const items = (event as unknown as { items: Array<{ requestExternalId: string }> }).items;
      if (items[0]?.requestExternalId.startsWith('BROKEN')) throw named('PortalError', 'an unexpected page');
      return { remaining: items.slice(2), more: items.length > 2, portalPage: '<html>page of the portal</html>' };
    } finally {
      checking--;
    }
  },
  'rpa/record-run-failure': async () => ({ outcome: 'recorded' }),
  'rpa/finish-batch': async () => ({ outcome: 'finished' }),
  // EventBridge's target: what it is given is in `calls`.
  'rpa/record-execution-ended': async () => ({ ended: 0 }),
};

const loadHandler: StepFunctionsOptions['loadHandler'] = async (module) => async (event, context) => {
  calls.push({ module, event: event as Event, context });
  return handlers[module]!(event as Event);
};

const callsOf = (module: string) => calls.filter((call) => call.module === module);

let stepFunctions: LocalStepFunctions;
let sfn: Pick<SFNClient, 'send'>;
beforeAll(async () => {
  stepFunctions = await startStepFunctions({ loadHandler, retryIntervalMs: 10 });
  // The module-scope client of the functions, pointed here as the local stack does.
  process.env.AWS_ENDPOINT_URL_SFN = stepFunctions.endpoint;
  ({ sfn } = await import('#lib/aws/sfn'));
});
afterAll(async () => {
  for (const release of held.values()) release();
  await stepFunctions?.close();
});
beforeEach(() => {
  calls.length = 0;
  mostChecking = 0;
});

let sequence = 0;
const unique = (prefix: string) => `${prefix}-${Date.now()}-${++sequence}`;

const viewOnPage = (requestExternalId: string, client = sfn, arns = stepFunctions.stateMachineArns) => {
  const input = { clientId: 'client-1', requestExternalId, runId: unique('run') };
  return client
    .send(
      new StartExecutionCommand({ stateMachineArn: arns.viewOnPage, name: input.runId, input: JSON.stringify(input) }),
    )
    .then(({ executionArn }) => ({ executionArn: executionArn!, input }));
};

const finished = async (executionArn: string, client = sfn) => {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const execution = await client.send(new DescribeExecutionCommand({ executionArn }));
    if (execution.status !== 'RUNNING') return execution;
    await sleep(20);
  }
  throw new Error(`${executionArn} still running`);
};

const historyOf = async (executionArn: string, client = sfn) =>
  (await client.send(new GetExecutionHistoryCommand({ executionArn }))).events ?? [];

describe('ViewOnPage', () => {
  it('runs FillPortalForm with the ids, as Lambda would, and keeps its outcome only', async () => {
    const { executionArn, input } = await viewOnPage('A-1');
    const execution = await finished(executionArn);
    expect(execution).toMatchObject({
      status: 'SUCCEEDED',
      stateMachineArn: stepFunctions.stateMachineArns.viewOnPage,
      name: input.runId,
      input: JSON.stringify(input),
    });
    expect(JSON.parse(execution.output!)).toEqual({ ...input, result: { outcome: 'form_filled' } });
    expect(execution.startDate).toBeInstanceOf(Date);
    expect(execution.stopDate!.getTime()).toBeGreaterThanOrEqual(execution.startDate!.getTime());

    const [fill, ...others] = calls;
    expect(others).toEqual([]);
    expect(fill!.module).toBe('rpa/fill-portal-form');
    expect(fill!.event).toEqual(input);
    expect(fill!.context.functionName).toBe('FillPortalForm');
    // The Lambda context's deadline is the Task's TimeoutSeconds (120 s).
    expect(fill!.context.getRemainingTimeInMillis()).toBeGreaterThan(100_000);
    expect(fill!.context.getRemainingTimeInMillis()).toBeLessThanOrEqual(120_000);
  });

  it('retries a task that throws PortalUnavailable, then goes on', async () => {
    const { executionArn } = await viewOnPage('FLAKY-1');
    const execution = await finished(executionArn);
    expect(execution.status).toBe('SUCCEEDED');
    expect(JSON.parse(execution.output!).result).toEqual({ outcome: 'form_filled' });
    expect(callsOf('rpa/fill-portal-form')).toHaveLength(3);
    expect(callsOf('rpa/record-run-failure')).toEqual([]);
    const failures = (await historyOf(executionArn)).filter((event) => event.type === 'LambdaFunctionFailed');
    expect(failures.map((event) => event.lambdaFunctionFailedEventDetails?.error)).toEqual([
      'PortalUnavailable',
      'PortalUnavailable',
    ]);
  });

  it('gives up on PortalUnavailable after 3 retries: the run is recorded failed, the execution fails', async () => {
    const { executionArn, input } = await viewOnPage('DOWN-1');
    const execution = await finished(executionArn);
    expect(execution).toMatchObject({ status: 'FAILED', error: 'PortalUnavailable' });
    expect(callsOf('rpa/fill-portal-form')).toHaveLength(4);
    expect(callsOf('rpa/record-run-failure').map((call) => call.event)).toEqual([
      { ...input, error: 'PortalUnavailable' },
    ]);
  });

  it('does not retry any other failure: RecordRunFailure gets the ids and the error name only', async () => {
    const { executionArn, input } = await viewOnPage('BROKEN-1');
    const execution = await finished(executionArn);
    expect(execution).toMatchObject({ status: 'FAILED', error: 'PortalError' });
    expect(execution.output).toBeUndefined();
    expect(callsOf('rpa/fill-portal-form')).toHaveLength(1);
    expect(callsOf('rpa/record-run-failure').map((call) => call.event)).toEqual([{ ...input, error: 'PortalError' }]);
    // As Lambda reports a function error: the error's name, and a JSON cause.
    const [failed] = (await historyOf(executionArn)).filter((event) => event.type === 'LambdaFunctionFailed');
    expect(failed?.lambdaFunctionFailedEventDetails).toEqual({
      error: 'PortalError',
      cause: JSON.stringify({ errorType: 'PortalError', errorMessage: 'the portal showed a page nobody expected' }),
    });
  });
});

describe('CheckAuthStatusBatch', () => {
  it('checks each account group, ACCOUNTS_AT_ONCE at a time, in as many calls as it takes; records a failing group; finishes', async () => {
    const item = (requestExternalId: string) => ({ requestExternalId, runId: unique('run') });
    // Portal groups, as a start makes them (lib/runs/run-start.ts): the other channel's id is ''.
    const portal = { channel: 'portal', payerConnectionId: '' };
    const groups = [
      { ...portal, portalAccountId: 'acct-a', items: ['A-1', 'A-2', 'A-3', 'A-4', 'A-5'].map(item) },
      { ...portal, portalAccountId: 'acct-b', items: ['BROKEN-1', 'B-2'].map(item) },
      { ...portal, portalAccountId: 'acct-c', items: ['C-1'].map(item) },
      // More groups than the Map runs at once, so the bound is reached and held.
      ...Array.from({ length: ACCOUNTS_AT_ONCE - 1 }, (_, i) => ({
        ...portal,
        portalAccountId: `acct-f${i}`,
        items: [item(`F-${i}`)],
      })),
    ];
    const input = { clientId: 'client-1', batchId: unique('batch'), groups };
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: stepFunctions.stateMachineArns.checkAuthStatus,
        name: input.batchId,
        input: JSON.stringify(input),
      }),
    );
    const execution = await finished(executionArn!);
    expect(execution.status).toBe('SUCCEEDED');
    // Per-group results are dropped: the output is the input, ids only.
    expect(JSON.parse(execution.output!)).toEqual(input);

    const ids = { clientId: input.clientId, batchId: input.batchId };
    const checks = callsOf('rpa/check-portal-status').map((call) => call.event as unknown);
    const [a, b, c] = groups;
    // Group A's five items: three calls, each given what the last one left.
    expect(checks.filter((event) => (event as Event).portalAccountId === 'acct-a')).toEqual([
      { ...ids, portalAccountId: 'acct-a', items: a!.items },
      { ...ids, portalAccountId: 'acct-a', items: a!.items.slice(2) },
      { ...ids, portalAccountId: 'acct-a', items: a!.items.slice(4) },
    ]);
    expect(checks).toContainEqual({ ...ids, portalAccountId: 'acct-c', items: c!.items });
    expect(mostChecking).toBe(ACCOUNTS_AT_ONCE);
    expect(callsOf('rpa/record-run-failure').map((call) => call.event)).toEqual([
      { ...ids, portalAccountId: 'acct-b', items: b!.items, error: 'PortalError' },
    ]);
    expect(callsOf('rpa/finish-batch').map((call) => call.event)).toEqual([ids]);
    expect(calls.at(-1)?.module).toBe('rpa/finish-batch');

    const iterations = (await historyOf(executionArn!)).filter((event) => event.type === 'MapIterationSucceeded');
    expect(iterations.map((event) => event.mapIterationSucceededEventDetails?.index).sort()).toEqual(
      groups.map((_, index) => index),
    );
  });
});

describe('timeouts', () => {
  it('a task that never returns times out after its TimeoutSeconds into the Catch path', async () => {
    const local = await startStepFunctions({ loadHandler, definitionOptions: { taskTimeoutSeconds: 1 } });
    const client = new SFNClient({ endpoint: local.endpoint });
    try {
      const began = Date.now();
      const { executionArn, input } = await viewOnPage('HANG-1', client, local.stateMachineArns);
      const execution = await finished(executionArn, client);
      expect(execution).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
      expect(Date.now() - began).toBeLessThan(3_000);
      expect(callsOf('rpa/record-run-failure').map((call) => call.event)).toEqual([
        { ...input, error: 'States.Timeout' },
      ]);
      const types = (await historyOf(executionArn, client)).map((event) => event.type);
      expect(types).toContain('LambdaFunctionTimedOut');
    } finally {
      client.destroy();
      await local.close();
    }
  });

  it('an execution that outlives its TimeoutSeconds ends TIMED_OUT', async () => {
    const local = await startStepFunctions({ loadHandler, definitionOptions: { executionTimeoutSeconds: 1 } });
    const client = new SFNClient({ endpoint: local.endpoint });
    try {
      const { executionArn } = await viewOnPage('HANG-2', client, local.stateMachineArns);
      const execution = await finished(executionArn, client);
      expect(execution.status).toBe('TIMED_OUT');
      expect(execution.stopDate!.getTime() - execution.startDate!.getTime()).toBeGreaterThanOrEqual(900);
      expect(callsOf('rpa/record-run-failure')).toEqual([]);
      expect((await historyOf(executionArn, client)).at(-1)?.type).toBe('ExecutionTimedOut');
    } finally {
      client.destroy();
      await local.close();
    }
  });
});

/** The execution-status events delivered for an execution so far, waiting up to a second for one. */
const statusChanges = async (executionArn: string, expected = 1) => {
  const of = () =>
    callsOf('rpa/record-execution-ended').filter(
      (call) => (call.event as unknown as { detail: { executionArn: string } }).detail.executionArn === executionArn,
    );
  for (let waited = 0; waited < 1_000 && of().length < expected; waited += 20) await sleep(20);
  return of();
};

describe('execution status changes (EventBridge to RecordExecutionEnded)', () => {
  it('hands an execution that ended TIMED_OUT to RecordExecutionEnded, as EventBridge delivers it', async () => {
    const local = await startStepFunctions({ loadHandler, definitionOptions: { executionTimeoutSeconds: 1 } });
    const client = new SFNClient({ endpoint: local.endpoint });
    try {
      const { executionArn, input } = await viewOnPage('HANG-4', client, local.stateMachineArns);
      const execution = await finished(executionArn, client);
      const [delivered, ...more] = await statusChanges(executionArn);
      expect(more).toEqual([]);
      expect(delivered!.context.functionName).toBe('RecordExecutionEnded');
      expect(delivered!.event).toEqual({
        version: '0',
        id: expect.any(String),
        'detail-type': 'Step Functions Execution Status Change',
        source: 'aws.states',
        account: '000000000000',
        time: execution.stopDate!.toISOString(),
        region: 'us-east-1',
        resources: [executionArn],
        detail: {
          executionArn,
          stateMachineArn: local.stateMachineArns.viewOnPage,
          name: input.runId,
          status: 'TIMED_OUT',
          startDate: execution.startDate!.getTime(),
          stopDate: execution.stopDate!.getTime(),
          input: JSON.stringify(input),
          output: null,
          inputDetails: { included: true },
          outputDetails: null,
        },
      });
    } finally {
      client.destroy();
      await local.close();
    }
  });

  it('hands it an execution stopped (ABORTED) or failed (FAILED); never one that succeeded', async () => {
    const stopped = await viewOnPage('HOLD-4');
    await sfn.send(new StopExecutionCommand({ executionArn: stopped.executionArn }));
    const failed = await viewOnPage('BROKEN-3');
    const succeeded = await viewOnPage('A-3');
    await finished(failed.executionArn);
    await finished(succeeded.executionArn);
    const [aborted] = await statusChanges(stopped.executionArn);
    expect(aborted!.event).toMatchObject({ detail: { status: 'ABORTED', name: stopped.input.runId } });
    const [failure] = await statusChanges(failed.executionArn);
    expect(failure!.event).toMatchObject({
      detail: { status: 'FAILED', name: failed.input.runId, error: 'PortalError', input: JSON.stringify(failed.input) },
    });
    expect(await statusChanges(succeeded.executionArn)).toEqual([]);
    held.get(stopped.input.runId)?.();
  });

  it('hands it nothing for the executions close() aborts: closing loses them, like a crash', async () => {
    const local = await startStepFunctions({ loadHandler });
    const client = new SFNClient({ endpoint: local.endpoint });
    const { executionArn } = await viewOnPage('HANG-5', client, local.stateMachineArns);
    client.destroy();
    await local.close();
    expect(await statusChanges(executionArn)).toEqual([]);
  });
});

describe('browser concurrency (reserved concurrency on AWS)', () => {
  it('throttles a browser function beyond its bound; the definition retries, then catches it', async () => {
    const local = await startStepFunctions({ loadHandler, browserConcurrency: 1, retryIntervalMs: 20 });
    const client = new SFNClient({ endpoint: local.endpoint });
    try {
      const holding = await viewOnPage('HOLD-5', client, local.stateMachineArns);
      for (let waited = 0; !held.has(holding.input.runId) && waited < 2_000; waited += 10) await sleep(10);
      // The one worker is busy: a second run waits through its retries, then fails as browser_busy would.
      const refused = await viewOnPage('A-4', client, local.stateMachineArns);
      expect(await finished(refused.executionArn, client)).toMatchObject({
        status: 'FAILED',
        error: 'Lambda.TooManyRequestsException',
      });
      const history = await historyOf(refused.executionArn, client);
      const throttles = history.filter((event) => event.type === 'LambdaFunctionStartFailed');
      expect(throttles).toHaveLength(10);
      expect(throttles[0]!.lambdaFunctionStartFailedEventDetails).toEqual({
        error: 'Lambda.TooManyRequestsException',
        cause: JSON.stringify({ errorType: 'Lambda.TooManyRequestsException', errorMessage: 'Rate Exceeded.' }),
      });
      // The only function that started is the recorder: FillPortalForm never ran for this run.
      expect(history.filter((event) => event.type === 'LambdaFunctionStarted')).toHaveLength(1);
      expect(callsOf('rpa/fill-portal-form').filter((call) => call.event.runId === refused.input.runId)).toEqual([]);
      expect(callsOf('rpa/record-run-failure').map((call) => call.event)).toContainEqual({
        ...refused.input,
        error: 'Lambda.TooManyRequestsException',
      });

      // The bound is per function: the batch's CheckPortalStatus still runs.
      const groups = [
        {
          channel: 'portal',
          portalAccountId: 'acct-b',
          payerConnectionId: '',
          items: [{ requestExternalId: 'B-4', runId: unique('run') }],
        },
      ];
      const batch = { clientId: 'client-1', batchId: unique('batch'), groups };
      const { executionArn } = await client.send(
        new StartExecutionCommand({
          stateMachineArn: local.stateMachineArns.checkAuthStatus,
          name: batch.batchId,
          input: JSON.stringify(batch),
        }),
      );
      expect((await finished(executionArn!, client)).status).toBe('SUCCEEDED');

      // A run that finds the worker busy and waits gets it once it is free.
      const waiting = viewOnPage('A-5', client, local.stateMachineArns);
      await sleep(60);
      held.get(holding.input.runId)!();
      expect((await finished((await waiting).executionArn, client)).status).toBe('SUCCEEDED');
      expect((await finished(holding.executionArn, client)).status).toBe('SUCCEEDED');
    } finally {
      client.destroy();
      await local.close();
    }
  });
});

describe('the Step Functions API', () => {
  it('StartExecution is idempotent by name, as AWS: same input while running is the same execution', async () => {
    const input = JSON.stringify({ clientId: 'client-1', requestExternalId: 'HOLD-1', runId: unique('run') });
    const name = JSON.parse(input).runId;
    const stateMachineArn = stepFunctions.stateMachineArns.viewOnPage;
    const first = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input }));
    const again = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input }));
    expect(again).toMatchObject({ executionArn: first.executionArn, startDate: first.startDate });

    const other = JSON.stringify({ ...JSON.parse(input), requestExternalId: 'HOLD-2' });
    await expect(sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: other }))).rejects.toBeInstanceOf(
      ExecutionAlreadyExists,
    );
    await sleep(50);
    held.get(name)?.();
    expect((await finished(first.executionArn!)).status).toBe('SUCCEEDED');
    // A closed execution's name is taken, whatever the input.
    await expect(sfn.send(new StartExecutionCommand({ stateMachineArn, name, input }))).rejects.toBeInstanceOf(
      ExecutionAlreadyExists,
    );
    const { executions } = await sfn.send(new ListExecutionsCommand({ stateMachineArn }));
    expect(executions?.filter((execution) => execution.name === name)).toHaveLength(1);
    expect(callsOf('rpa/fill-portal-form')).toHaveLength(1);
  });

  it('answers unknown or malformed requests with the named exceptions of the SDK', async () => {
    const { viewOnPage: stateMachineArn } = stepFunctions.stateMachineArns;
    const unknownExecution = stateMachineArn.replace(':stateMachine:', ':execution:').concat(':nobody');
    await expect(sfn.send(new DescribeExecutionCommand({ executionArn: unknownExecution }))).rejects.toBeInstanceOf(
      ExecutionDoesNotExist,
    );
    await expect(
      sfn.send(new StartExecutionCommand({ stateMachineArn: `${stateMachineArn}-missing`, input: '{}' })),
    ).rejects.toBeInstanceOf(StateMachineDoesNotExist);
    await expect(
      sfn.send(new StartExecutionCommand({ stateMachineArn, name: 'has space', input: '{}' })),
    ).rejects.toBeInstanceOf(InvalidName);
    await expect(sfn.send(new StartExecutionCommand({ stateMachineArn, input: '{"ids":' }))).rejects.toBeInstanceOf(
      InvalidExecutionInput,
    );
  });

  it('StopExecution aborts a running execution with its error and cause', async () => {
    const { executionArn } = await viewOnPage('HOLD-3');
    const { stopDate } = await sfn.send(new StopExecutionCommand({ executionArn, error: 'Cancelled', cause: 'test' }));
    expect(stopDate).toBeInstanceOf(Date);
    expect(await finished(executionArn)).toMatchObject({ status: 'ABORTED', error: 'Cancelled', cause: 'test' });
    const { executions } = await sfn.send(
      new ListExecutionsCommand({
        stateMachineArn: stepFunctions.stateMachineArns.viewOnPage,
        statusFilter: 'ABORTED',
      }),
    );
    expect(executions?.map((execution) => execution.executionArn)).toContain(executionArn);
  });

  it('GetExecutionHistory lists every step with its input and output, in order', async () => {
    const { executionArn, input } = await viewOnPage('A-2');
    await finished(executionArn);
    const events = await historyOf(executionArn);
    expect(events.map((event) => event.type)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'ExecutionSucceeded',
    ]);
    expect(events.map((event) => event.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(JSON.parse(events[0]!.executionStartedEventDetails!.input!)).toEqual(input);
    expect(JSON.parse(events[2]!.lambdaFunctionScheduledEventDetails!.input!)).toEqual(input);
    // The function's own result, as AWS records it; the state's output keeps the outcome only.
    expect(JSON.parse(events[4]!.lambdaFunctionSucceededEventDetails!.output!)).toHaveProperty('portalPage');
    expect(JSON.parse(events[5]!.stateExitedEventDetails!.output!)).toEqual({
      ...input,
      result: { outcome: 'form_filled' },
    });

    const withoutData = await sfn.send(new GetExecutionHistoryCommand({ executionArn, includeExecutionData: false }));
    expect(JSON.stringify(withoutData.events)).not.toContain(input.runId);
    const reversed = await sfn.send(
      new GetExecutionHistoryCommand({ executionArn, reverseOrder: true, maxResults: 2 }),
    );
    expect(reversed.events?.map((event) => event.type)).toEqual(['ExecutionSucceeded', 'TaskStateExited']);
    expect(reversed.nextToken).toBeDefined();
  });

  it('close() aborts what is still running and stops listening', async () => {
    const local = await startStepFunctions({ loadHandler });
    const client = new SFNClient({ endpoint: local.endpoint, maxAttempts: 1 });
    await viewOnPage('HANG-3', client, local.stateMachineArns);
    await local.close();
    await expect(
      client.send(new ListExecutionsCommand({ stateMachineArn: local.stateMachineArns.viewOnPage })),
    ).rejects.toThrow();
    client.destroy();
  });
});
