/**
 * The automation's two state machines in Amazon States Language, written once: the CDK stack
 * deploys them with its functions' ARNs (infra/automation-stack.ts), the local Step Functions
 * stand-in runs them with each Task bound to the same handler (local/step-functions.ts).
 *
 * Executions carry ids only, never PHI or secrets: Parameters pick ids out of the state's input,
 * ResultSelector keeps only a task's `outcome`, and recorders' results are discarded. A task's
 * failure reaches RecordRunFailure as its error name only (the Catch output's Cause stays behind).
 */

/** The Task states of the state machines; each is run by a function of lib/routes/automation-tasks.ts. */
export type AutomationTaskName =
  | 'FillPortalForm'
  | 'CheckPortalStatus'
  | 'SubmitPasClaim'
  | 'CheckPayerStatus'
  | 'RecordRunFailure'
  | 'FinishBatch';

/** The resource (Lambda function ARN) of every Task state. */
export type TaskResources = Record<AutomationTaskName, string>;

/** Names of the deployed state machines within the automation stack, and of the local ones. */
export const stateMachineNames = {
  viewOnPage: 'ViewOnPage',
  checkAuthStatus: 'CheckAuthStatusBatch',
  submitToPayer: 'SubmitToPayer',
} as const;
export type StateMachineKey = keyof typeof stateMachineNames;

/** Seconds. Browser tasks: a portal login plus a form; the Lambda timeout (150 s) leaves the worker time to close. */
export const TIMEOUTS = {
  browserTask: 120,
  recorderTask: 30,
  /**
   * A payer-API task: a token (one assertion, one POST) and one PAS call, which the IG allows the payer
   * 15 s to answer, or a group's inquiries one after the other while the invocation has time.
   */
  payerTask: 60,
  viewOnPage: 300,
  checkAuthStatus: 900,
  /** A submission's attempts and their waits (docs/payer-api.md, "Retries"). */
  submitToPayer: 900,
} as const;

/**
 * Concurrent invocations of each browser function (its reserved concurrency on AWS, infra/config.ts;
 * the same bound in the local stand-in): each is a Chromium of up to 2 GB and a portal login.
 */
export const BROWSER_CONCURRENCY = 10;

/**
 * A batch's accounts in session at once (the CheckEachAccount Map's MaxConcurrency), each account in
 * one session at most (the lease). A batch's accounts are one client's, mostly on one portal, so this
 * is also what one batch asks of a portal: at most 5 logins at once, then one per account for the
 * batch (a group's lookups, at most 25, fit in one invocation). Half the browser functions' reserved
 * concurrency, so that another batch or a view-on-page run still finds a worker.
 */
export const ACCOUNTS_AT_ONCE = BROWSER_CONCURRENCY / 2;

/** The error name a worker throws when the portal cannot be reached at all (retried with backoff). */
const PORTAL_UNAVAILABLE = 'PortalUnavailable';
/** The error name a worker throws when the run's portal account is in another session (waits behind it). */
const PORTAL_ACCOUNT_BUSY = 'PortalAccountBusy';

/** Shorter timeouts, for tests only (whole seconds, at least 1: the ASL minimum). */
export interface DefinitionOptions {
  taskTimeoutSeconds?: number;
  executionTimeoutSeconds?: number;
}

export type AslState = Record<string, unknown> & {
  Type: 'Task' | 'Map' | 'Fail' | 'Pass' | 'Succeed' | 'Choice' | 'Wait';
};
export interface AslDefinition {
  Comment: string;
  StartAt: string;
  TimeoutSeconds?: number;
  States: Record<string, AslState>;
}

/** The portal is down or refuses connections: worth a few tries, spaced out (portals rate-limit logins). */
const portalRetry = { ErrorEquals: [PORTAL_UNAVAILABLE], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 3 };

/**
 * The account's lease is held by another session: wait behind it. About 130 s in all (5 s, then 20%
 * longer each time), so a view-on-page run that waited still has its task's 120 s inside its 300 s;
 * a session holds the lease for seconds.
 */
const busyRetry = { ErrorEquals: [PORTAL_ACCOUNT_BUSY], IntervalSeconds: 5, BackoffRate: 1.2, MaxAttempts: 10 };

/** Lambda's own transient failures (service errors; throttling below), as AWS recommends retrying them. */
const LAMBDA_TRANSIENT_ERRORS = [
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
];
const LAMBDA_THROTTLED = 'Lambda.TooManyRequestsException';

const lambdaRetry = (errors: string[]) => ({
  ErrorEquals: errors,
  IntervalSeconds: 1,
  BackoffRate: 2,
  MaxAttempts: 3,
  JitterStrategy: 'FULL',
});
/** Recorders are small and have no reserved concurrency: a throttled one is retried like any transient failure. */
export const recorderRetry = lambdaRetry([...LAMBDA_TRANSIENT_ERRORS, LAMBDA_THROTTLED]);

/**
 * Every browser worker is busy (the function's reserved concurrency is used up, and Lambda throttles
 * the invoke): the run waits for one, spaced out, for up to about 2½ minutes (half that on average,
 * with the jitter), so that a worker found at the end still has its Task's time within the
 * execution's; then `browser_busy`.
 */
const browserBusyRetry = {
  ErrorEquals: [LAMBDA_THROTTLED],
  IntervalSeconds: 3,
  BackoffRate: 1.5,
  MaxDelaySeconds: 30,
  MaxAttempts: 9,
  JitterStrategy: 'FULL',
};

/** Parameters passing the named ids of the state's input, and nothing else. */
const ids = (...names: string[]) => Object.fromEntries(names.map((name) => [`${name}.$`, `$.${name}`]));

/** A task's result as the execution keeps it: its outcome only. */
const outcomeOnly = { 'outcome.$': '$.outcome' };

const browserTask = (
  resource: string,
  parameters: Record<string, string>,
  timeoutSeconds: number,
  next: { End: true } | { Next: string },
  resultSelector: Record<string, string> = outcomeOnly,
): AslState => ({
  Type: 'Task',
  Resource: resource,
  Parameters: parameters,
  ResultSelector: resultSelector,
  ResultPath: '$.result',
  TimeoutSeconds: timeoutSeconds,
  Retry: [portalRetry, busyRetry, browserBusyRetry, lambdaRetry(LAMBDA_TRANSIENT_ERRORS)],
  // Anything else (a timeout, retries exhausted, a crash): the run is marked failed by the recorder.
  Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RecordRunFailure' }],
  ...next,
});

/**
 * A payer-API task: no browser and no lease, so no portal or busy retries. A payer that answers 429 or
 * 5xx, or not in time, is not retried here: the task itself says how long to wait (`waitSeconds`, the
 * payer's Retry-After or our back-off) and the machine waits in a Wait state, costing no Lambda time.
 */
const payerTask = (
  resource: string,
  parameters: Record<string, string>,
  timeoutSeconds: number,
  next: { Next: string },
  resultSelector: Record<string, string>,
): AslState => ({
  Type: 'Task',
  Resource: resource,
  Parameters: parameters,
  ResultSelector: resultSelector,
  ResultPath: '$.result',
  TimeoutSeconds: timeoutSeconds,
  Retry: [recorderRetry],
  Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RecordRunFailure' }],
  ...next,
});

const recordRunFailure = (
  resource: string,
  parameters: Record<string, string>,
  timeoutSeconds: number,
  next: { End: true } | { Next: string },
): AslState => ({
  Type: 'Task',
  Resource: resource,
  Parameters: { ...parameters, 'error.$': '$.error.Error' },
  ResultPath: null,
  TimeoutSeconds: timeoutSeconds,
  Retry: [recorderRetry],
  ...next,
});

/**
 * ViewOnPage, input `{clientId, requestExternalId, runId}`: the browser worker fills the portal's
 * form; if it fails for good, the recorder marks the run failed and the execution fails with the
 * task's error name.
 */
export const viewOnPageDefinition = (resources: TaskResources, options: DefinitionOptions = {}): AslDefinition => {
  const task = options.taskTimeoutSeconds ?? TIMEOUTS.browserTask;
  const recorder = options.taskTimeoutSeconds ?? TIMEOUTS.recorderTask;
  const run = ['clientId', 'requestExternalId', 'runId'];
  return {
    Comment: 'View on page: fill the payer portal form of one request, stop before submitting (docs/rpa.md)',
    StartAt: 'FillPortalForm',
    TimeoutSeconds: options.executionTimeoutSeconds ?? TIMEOUTS.viewOnPage,
    States: {
      FillPortalForm: browserTask(resources.FillPortalForm, ids(...run), task, { End: true }),
      RecordRunFailure: recordRunFailure(resources.RecordRunFailure, ids(...run), recorder, { Next: 'RunFailed' }),
      RunFailed: {
        Type: 'Fail',
        ErrorPath: '$.error.Error',
        Cause: 'The run failed; its outcome is recorded on the run.',
      },
    },
  };
};

/**
 * A payer connection's group of a batch: its inquiries, called again for what an invocation did not
 * reach, after waiting as long as the task says (the payer's Retry-After, or our back-off).
 */
const payerGroupStates = (resources: TaskResources, options: DefinitionOptions): Record<string, AslState> => {
  const payer = options.taskTimeoutSeconds ?? TIMEOUTS.payerTask;
  const payerGroup = { ...ids('clientId', 'batchId', 'payerConnectionId'), 'items.$': '$.items' };
  return {
    CheckPayerStatus: payerTask(
      resources.CheckPayerStatus,
      payerGroup,
      payer,
      { Next: 'MorePayerChecks' },
      { 'more.$': '$.more', 'items.$': '$.remaining', 'waitSeconds.$': '$.waitSeconds' },
    ),
    MorePayerChecks: {
      Type: 'Choice',
      Choices: [{ Variable: '$.result.more', BooleanEquals: true, Next: 'WaitForPayer' }],
      Default: 'GroupDone',
    },
    WaitForPayer: { Type: 'Wait', SecondsPath: '$.result.waitSeconds', Next: 'NextPayerChecks' },
    NextPayerChecks: {
      Type: 'Pass',
      Parameters: { ...ids('clientId', 'batchId', 'payerConnectionId'), 'items.$': '$.result.items' },
      Next: 'CheckPayerStatus',
    },
  };
};

/**
 * CheckAuthStatusBatch, input `{clientId, batchId, groups: [{channel, portalAccountId, payerConnectionId,
 * items: [{requestExternalId, runId}]}]}`: the batch's requests grouped by portal account, so each
 * account signs in once, or by payer connection (`channel: 'pas'`: `$inquire`, no browser; the id of
 * the other channel is ''). Each
 * group is one session at a time (ACCOUNTS_AT_ONCE groups at once); its task looks up part of the group and returns
 * the rest (`more`), and the loop calls it again for those. A group that fails for good is recorded and
 * the batch goes on; FinishBatch then closes it. Results are dropped: the runs hold the outcomes.
 */
export const checkAuthStatusDefinition = (resources: TaskResources, options: DefinitionOptions = {}): AslDefinition => {
  const task = options.taskTimeoutSeconds ?? TIMEOUTS.browserTask;
  const recorder = options.taskTimeoutSeconds ?? TIMEOUTS.recorderTask;
  const group = { ...ids('clientId', 'batchId', 'portalAccountId'), 'items.$': '$.items' };
  return {
    Comment: 'Check auth status: read the authorization of each request of a batch on the payer portal (docs/rpa.md)',
    StartAt: 'CheckEachAccount',
    TimeoutSeconds: options.executionTimeoutSeconds ?? TIMEOUTS.checkAuthStatus,
    States: {
      CheckEachAccount: {
        Type: 'Map',
        ItemsPath: '$.groups',
        // Portals rate-limit logins: a few accounts' sessions at once, one per account (the lease).
        MaxConcurrency: ACCOUNTS_AT_ONCE,
        ItemSelector: {
          'clientId.$': '$.clientId',
          'batchId.$': '$.batchId',
          'channel.$': '$$.Map.Item.Value.channel',
          'portalAccountId.$': '$$.Map.Item.Value.portalAccountId',
          'payerConnectionId.$': '$$.Map.Item.Value.payerConnectionId',
          'items.$': '$$.Map.Item.Value.items',
        },
        ItemProcessor: {
          ProcessorConfig: { Mode: 'INLINE' },
          StartAt: 'WhichChannel',
          States: {
            // A group is one portal account's or one payer connection's (lib/runs/channel-choice.ts).
            WhichChannel: {
              Type: 'Choice',
              Choices: [{ Variable: '$.channel', StringEquals: 'pas', Next: 'CheckPayerStatus' }],
              Default: 'CheckPortalStatus',
            },
            ...payerGroupStates(resources, options),
            CheckPortalStatus: browserTask(
              resources.CheckPortalStatus,
              group,
              task,
              { Next: 'MoreToCheck' },
              { 'more.$': '$.more', 'items.$': '$.remaining' },
            ),
            MoreToCheck: {
              Type: 'Choice',
              Choices: [{ Variable: '$.result.more', BooleanEquals: true, Next: 'NextLookups' }],
              Default: 'GroupDone',
            },
            NextLookups: {
              Type: 'Pass',
              Parameters: { ...ids('clientId', 'batchId', 'portalAccountId'), 'items.$': '$.result.items' },
              Next: 'CheckPortalStatus',
            },
            GroupDone: { Type: 'Succeed' },
            RecordRunFailure: recordRunFailure(resources.RecordRunFailure, group, recorder, { End: true }),
          },
        },
        ResultPath: null,
        Next: 'FinishBatch',
      },
      FinishBatch: {
        Type: 'Task',
        Resource: resources.FinishBatch,
        Parameters: ids('clientId', 'batchId'),
        ResultPath: null,
        TimeoutSeconds: recorder,
        Retry: [recorderRetry],
        End: true,
      },
    },
  };
};

/**
 * SubmitToPayer, input `{clientId, requestExternalId, runId}`: one submission to the payer's PAS API
 * (docs/payer-api.md). Each attempt is one invocation; between attempts the machine waits as long as
 * the task says (the payer's Retry-After, or our back-off), and the task ends the run when attempts
 * are used up. A failure for good is recorded like a browser task's.
 */
export const submitToPayerDefinition = (resources: TaskResources, options: DefinitionOptions = {}): AslDefinition => {
  const task = options.taskTimeoutSeconds ?? TIMEOUTS.payerTask;
  const recorder = options.taskTimeoutSeconds ?? TIMEOUTS.recorderTask;
  const run = ['clientId', 'requestExternalId', 'runId'];
  return {
    Comment: "Submit a request to the payer's prior-authorization API (Da Vinci PAS $submit) (docs/payer-api.md)",
    StartAt: 'SubmitPasClaim',
    TimeoutSeconds: options.executionTimeoutSeconds ?? TIMEOUTS.submitToPayer,
    States: {
      SubmitPasClaim: payerTask(
        resources.SubmitPasClaim,
        ids(...run),
        task,
        { Next: 'SubmitAgain' },
        {
          'waitSeconds.$': '$.waitSeconds',
        },
      ),
      SubmitAgain: {
        Type: 'Choice',
        Choices: [{ Variable: '$.result.waitSeconds', NumericGreaterThan: 0, Next: 'WaitForPayer' }],
        Default: 'Submitted',
      },
      WaitForPayer: { Type: 'Wait', SecondsPath: '$.result.waitSeconds', Next: 'SubmitPasClaim' },
      Submitted: { Type: 'Succeed' },
      RecordRunFailure: recordRunFailure(resources.RecordRunFailure, ids(...run), recorder, { Next: 'RunFailed' }),
      RunFailed: {
        Type: 'Fail',
        ErrorPath: '$.error.Error',
        Cause: 'The run failed; its outcome is recorded on the run.',
      },
    },
  };
};

export const stateMachineDefinitions: Record<
  StateMachineKey,
  (resources: TaskResources, options?: DefinitionOptions) => AslDefinition
> = {
  viewOnPage: viewOnPageDefinition,
  checkAuthStatus: checkAuthStatusDefinition,
  submitToPayer: submitToPayerDefinition,
};

/** Every Task state of a definition, Map iterations included, by name. */
export const taskStatesOf = (definition: Pick<AslDefinition, 'States'>): Record<string, AslState> => {
  const found: Record<string, AslState> = {};
  for (const [name, state] of Object.entries(definition.States)) {
    if (state.Type === 'Task') found[name] = state;
    if (state.Type === 'Map') Object.assign(found, taskStatesOf(state.ItemProcessor as Pick<AslDefinition, 'States'>));
  }
  return found;
};
