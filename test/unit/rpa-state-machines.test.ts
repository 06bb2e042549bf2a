import { existsSync } from 'node:fs';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { automationTasks } from '#lib/routes/automation-tasks';
import {
  type AslDefinition,
  type AslState,
  checkAuthStatusDefinition,
  stateMachineDefinitions,
  submitToPayerDefinition,
  type TaskResources,
  TIMEOUTS,
  taskStatesOf,
  viewOnPageDefinition,
} from '#lib/runs/state-machines';

const resources = Object.fromEntries(
  automationTasks.map((task) => [task.name, `arn:aws:lambda:us-east-1:123456789012:function:${task.name}`]),
) as TaskResources;
const definitions = Object.entries(stateMachineDefinitions).map(([key, build]) => [key, build(resources)] as const);
const browserTasks = new Set(automationTasks.filter((task) => task.worker === 'browser').map((task) => task.name));
const payerTasks = new Set(automationTasks.filter((task) => task.worker === 'payer').map((task) => task.name));

/** The ids an execution may carry, and where a state may read them. */
const ID_FIELDS = ['clientId', 'requestExternalId', 'runId', 'batchId', 'portalAccountId', 'payerConnectionId'];
/** A group's `items` are ids too: `[{requestExternalId, runId}]` (what a group's task left, or the batch's). */
const ITEM_PATHS = ['$.items', '$$.Map.Item.Value.items', '$.result.items'];
const isIdPath = (key: string, path: unknown) =>
  (ID_FIELDS.includes(key) && (path === `$.${key}` || path === `$$.Map.Item.Value.${key}`)) ||
  // A batch group's channel: `portal` or `pas`, chosen at the start (lib/runs/channel-choice.ts).
  (key === 'channel' && path === '$$.Map.Item.Value.channel') ||
  (key === 'items' && ITEM_PATHS.includes(path as string));

/** Every payload template (Parameters, ItemSelector) of a definition, Map iterations included. */
const templatesOf = (definition: Pick<AslDefinition, 'States'>): Array<[string, Record<string, unknown>]> =>
  Object.entries(definition.States).flatMap(([name, state]) => [
    ...(['Parameters', 'ItemSelector'] as const)
      .filter((field) => state[field] !== undefined)
      .map(
        (field) => [`${name}.${field}`, state[field] as Record<string, unknown>] as [string, Record<string, unknown>],
      ),
    ...(state.Type === 'Map' ? templatesOf(state.ItemProcessor as Pick<AslDefinition, 'States'>) : []),
  ]);

describe('state machine definitions', () => {
  it('are valid ASL (aws-local-stepfunctions validates on construction, and refuses a broken one)', () => {
    for (const [, definition] of definitions) {
      expect(() => new StateMachine(definition as unknown as StateMachineDefinition)).not.toThrow();
    }
    const broken = viewOnPageDefinition(resources);
    (broken.States.FillPortalForm as AslState).Catch = [{ ErrorEquals: ['States.ALL'], Next: 'Nowhere' }];
    expect(() => new StateMachine(broken as unknown as StateMachineDefinition)).toThrow(/invalid/i);
  });

  it('bind every Task state of the automation table, and only those, to its resource', () => {
    const bound = definitions.flatMap(([, definition]) => Object.entries(taskStatesOf(definition)));
    expect(new Set(bound.map(([name]) => name))).toEqual(new Set(automationTasks.map((task) => task.name)));
    for (const [name, state] of bound) expect(state.Resource).toBe(resources[name as keyof TaskResources]);
    for (const task of automationTasks) expect(existsSync(`functions/${task.handler}.ts`)).toBe(true);
  });

  it('give every Task a TimeoutSeconds and Lambda retries; browser tasks also retry PortalUnavailable and catch all', () => {
    for (const [, definition] of definitions) {
      for (const [name, state] of Object.entries(taskStatesOf(definition))) {
        const retry = state.Retry as Array<Record<string, unknown>>;
        expect(retry.some((retrier) => (retrier.ErrorEquals as string[]).includes('Lambda.ServiceException'))).toBe(
          true,
        );
        if (browserTasks.has(name as never)) {
          expect(state.TimeoutSeconds).toBe(120);
          expect(retry).toContainEqual({
            ErrorEquals: ['PortalUnavailable'],
            IntervalSeconds: 2,
            BackoffRate: 2,
            MaxAttempts: 3,
          });
          // Behind another session on the account: about 200 s in all, inside a view-on-page execution.
          const busy = retry.find((retrier) => (retrier.ErrorEquals as string[]).includes('PortalAccountBusy'))!;
          const waited = Array.from(
            { length: busy.MaxAttempts as number },
            (_, i) => (busy.IntervalSeconds as number) * (busy.BackoffRate as number) ** i,
          ).reduce((sum, seconds) => sum + seconds, 0);
          expect(waited).toBeGreaterThan(120);
          expect(waited).toBeLessThan(300 - 120);
          expect(state.Catch).toEqual([
            { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RecordRunFailure' },
          ]);
          // Throttled (reserved concurrency used up): the run waits for a worker, longer than for a transient error.
          const throttled = retry.filter((retrier) =>
            (retrier.ErrorEquals as string[]).includes('Lambda.TooManyRequestsException'),
          );
          expect(throttled).toEqual([
            {
              ErrorEquals: ['Lambda.TooManyRequestsException'],
              IntervalSeconds: 3,
              BackoffRate: 1.5,
              MaxDelaySeconds: 30,
              MaxAttempts: 9,
              JitterStrategy: 'FULL',
            },
          ]);
          const longest = Array.from({ length: 9 }, (_, n) => Math.min(30, 3 * 1.5 ** n)).reduce((a, b) => a + b);
          // A worker found after the longest wait still has its Task's time before the execution times out.
          expect(longest).toBeLessThan(TIMEOUTS.viewOnPage - TIMEOUTS.browserTask);
        } else if (payerTasks.has(name as never)) {
          // No browser, no lease: Lambda's own retries only; the payer's unavailability is waited out in a
          // Wait state the task's answer sizes (waitSeconds), so no payer retry holds a Lambda.
          expect(state.TimeoutSeconds).toBe(TIMEOUTS.payerTask);
          expect((state.Retry as Array<{ ErrorEquals: string[] }>).flatMap((retrier) => retrier.ErrorEquals)).toContain(
            'Lambda.TooManyRequestsException',
          );
          expect(state.Catch).toEqual([
            { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RecordRunFailure' },
          ]);
        } else {
          expect(state.TimeoutSeconds).toBe(30);
          expect(state.Catch).toBeUndefined();
        }
      }
    }
  });

  it('time executions out, and check a batch five accounts at a time', () => {
    expect(viewOnPageDefinition(resources).TimeoutSeconds).toBe(300);
    const batch = checkAuthStatusDefinition(resources);
    expect(batch.TimeoutSeconds).toBe(900);
    expect(batch.States.CheckEachAccount).toMatchObject({
      Type: 'Map',
      ItemsPath: '$.groups',
      MaxConcurrency: 5,
      Next: 'FinishBatch',
    });
    // A group's task is called again with what it left, until it says there is no more.
    const group = (batch.States.CheckEachAccount!.ItemProcessor as Pick<AslDefinition, 'States'>).States;
    expect(group.CheckPortalStatus).toMatchObject({ Next: 'MoreToCheck' });
    expect(group.MoreToCheck).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.result.more', BooleanEquals: true, Next: 'NextLookups' }],
      Default: 'GroupDone',
    });
    expect(group.NextLookups).toMatchObject({ Type: 'Pass', Next: 'CheckPortalStatus' });
    // Tests may shorten them; the definition stays the same otherwise.
    const short = viewOnPageDefinition(resources, { taskTimeoutSeconds: 1, executionTimeoutSeconds: 2 });
    expect(short.TimeoutSeconds).toBe(2);
    expect(Object.values(taskStatesOf(short)).map((state) => state.TimeoutSeconds)).toEqual([1, 1]);
  });

  it('send a group to its channel, and a submission one attempt per call, waiting as long as the task says', () => {
    const group = (checkAuthStatusDefinition(resources).States.CheckEachAccount!.ItemProcessor as AslDefinition).States;
    expect(group.WhichChannel).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.channel', StringEquals: 'pas', Next: 'CheckPayerStatus' }],
      Default: 'CheckPortalStatus',
    });
    expect(group.WaitForPayer).toEqual({ Type: 'Wait', SecondsPath: '$.result.waitSeconds', Next: 'NextPayerChecks' });
    const submit = submitToPayerDefinition(resources);
    expect(submit.TimeoutSeconds).toBe(TIMEOUTS.submitToPayer);
    expect(submit.States.SubmitAgain).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.result.waitSeconds', NumericGreaterThan: 0, Next: 'WaitForPayer' }],
      Default: 'Submitted',
    });
    expect(submit.States.WaitForPayer).toEqual({
      Type: 'Wait',
      SecondsPath: '$.result.waitSeconds',
      Next: 'SubmitPasClaim',
    });
  });

  it('pass ids only into states: Parameters and ItemSelector name ids (and the error name of a failure)', () => {
    for (const [, definition] of definitions) {
      const templates = templatesOf(definition);
      expect(templates.length).toBeGreaterThan(0);
      for (const [where, template] of templates) {
        for (const [field, path] of Object.entries(template)) {
          const key = field.replace(/\.\$$/, '');
          const allowed = isIdPath(key, path) || (key === 'error' && path === '$.error.Error');
          expect({ where, field, path, allowed }).toEqual({ where, field, path, allowed: true });
        }
      }
    }
  });

  it('keep no task result beyond its outcome: ResultSelector picks the outcome, or ResultPath drops it', () => {
    for (const [, definition] of definitions) {
      for (const [name, state] of Object.entries(taskStatesOf(definition))) {
        if (name === 'CheckPortalStatus') {
          // A group's task keeps what it left for the next call, ids only.
          expect(state).toMatchObject({
            ResultSelector: { 'more.$': '$.more', 'items.$': '$.remaining' },
            ResultPath: '$.result',
          });
        } else if (name === 'CheckPayerStatus') {
          expect(state).toMatchObject({
            ResultSelector: { 'more.$': '$.more', 'items.$': '$.remaining', 'waitSeconds.$': '$.waitSeconds' },
            ResultPath: '$.result',
          });
        } else if (name === 'SubmitPasClaim') {
          // How long to wait before the next attempt: a number, nothing of the payer's answer.
          expect(state).toMatchObject({ ResultSelector: { 'waitSeconds.$': '$.waitSeconds' }, ResultPath: '$.result' });
        } else if (browserTasks.has(name as never)) {
          expect(state).toMatchObject({ ResultSelector: { 'outcome.$': '$.outcome' }, ResultPath: '$.result' });
        } else {
          expect(state.ResultPath).toBeNull();
        }
      }
    }
    // So is the batch's per-item output: the run records hold the outcomes.
    expect(checkAuthStatusDefinition(resources).States.CheckEachAccount?.ResultPath).toBeNull();
  });
});
