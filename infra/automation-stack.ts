import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Architecture } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { serviceConfigOf } from '#infra/config';
import { AutomationStateMachine } from '#infra/constructs/automation-state-machine';
import { DueRechecks } from '#infra/constructs/due-rechecks';
import { secretsReaderRoleName } from '#infra/constructs/encryption-keys';
import { ExecutionStatusTrigger } from '#infra/constructs/execution-status-trigger';
import { bindRouteAccess, type InvokeTarget } from '#infra/constructs/route-access';
import { ServiceFunction, type ServiceFunctionProps } from '#infra/constructs/service-function';
import type { DataStack } from '#infra/data-stack';
import { RECHECKS_STATE_MACHINE_NAME } from '#lib/rechecks/state-machine';
import type { InvokedFunctionName } from '#lib/routes/access-model';
import type { AutomationTask, InvokedFunction, RecheckTask } from '#lib/routes/automation-tasks';
import type {
  EventFunction,
  ExecutionStatusTrigger as ExecutionStatusChange,
  ScheduleTrigger,
} from '#lib/routes/event-functions';
import {
  type AutomationTaskName,
  type StateMachineKey,
  stateMachineDefinitions,
  stateMachineNames,
  type TaskResources,
  TIMEOUTS,
  taskStatesOf,
} from '#lib/runs/state-machines';

export interface AutomationStackProps extends StackProps {
  data: DataStack;
  /** The automation task table (lib/routes/automation-tasks.ts): one function per Task state. */
  tasks: readonly AutomationTask[];
  /** Functions of the state machines' execution-status events (lib/routes/event-functions.ts automationEventFunctions). */
  eventFunctions: readonly EventFunction<ExecutionStatusChange>[];
  /** The functions the tasks invoke (lib/routes/automation-tasks.ts `invokedFunctions`: the run credentials function). */
  invokedFunctions: readonly InvokedFunction[];
  /** The scheduled re-checks' task table (lib/routes/automation-tasks.ts `recheckTasks`). */
  recheckTasks: readonly RecheckTask[];
  /** Scheduled functions that call payers (lib/routes/event-functions.ts `scheduledPayerFunctions`). */
  scheduledPayerFunctions: readonly EventFunction<ScheduleTrigger>[];
  /**
   * The API's public base URL payers notify (CDK context `publicApiBaseUrl`: the deployment's stable
   * address, e.g. its custom domain). A context value, not the API stack's URL: that stack depends on this
   * one, so a reference would be a cycle. Unset: no PAS subscription is made; re-checks read pended results.
   */
  publicApiBaseUrl?: string;
}

type Sizing = Pick<ServiceFunctionProps, 'memorySize' | 'timeout' | 'architecture' | 'installedModules'>;

/**
 * The browser worker runs Chromium: memory, and time for a login plus a form (the Task gives up at
 * 120 s; the function's 150 s let a late worker close its browser). x86_64 because
 * @sparticuz/chromium's npm package holds the x64 build only, the binary the local stack runs too.
 * Chromium's compressed binary and playwright-core ship installed beside the bundle.
 */
const SIZING: Record<AutomationTask['worker'], Sizing> = {
  browser: {
    memorySize: 2048,
    timeout: Duration.seconds(150),
    architecture: Architecture.X86_64,
    installedModules: ['@sparticuz/chromium', 'playwright-core'],
  },
  recorder: { timeout: Duration.seconds(TIMEOUTS.recorderTask) },
  // A PAS call is one HTTPS request: no browser, little memory; the Task's timeout plus time to record.
  payer: { memorySize: 512, timeout: Duration.seconds(TIMEOUTS.payerTask + 15) },
};

/**
 * Service-review automation: one function per automation task (the browser workers, with their
 * reserved concurrency, and the recorders) and per function they invoke (the run credentials
 * function, which alone may decrypt portal secrets), each with the access its row declares, the two
 * state machines of lib/runs/state-machines.ts bound to the tasks' functions, and the functions of
 * their execution-status events behind an EventBridge rule. The API stack starts executions by the
 * machines' names.
 */
export class AutomationStack extends Stack {
  readonly functions: Partial<Record<AutomationTaskName, ServiceFunction>> = {};
  /** The execution-status event functions, by name, and the rule that triggers each. */
  readonly eventFunctions: Record<string, { fn: ServiceFunction; trigger: ExecutionStatusTrigger }> = {};
  /** The invoked functions, created before the tasks that invoke them. */
  readonly invokeTargets: Partial<Record<InvokedFunctionName, InvokeTarget>> = {};
  readonly stateMachines: Partial<Record<StateMachineKey, AutomationStateMachine>> = {};
  /** `<stack name>-ViewOnPage`, `<stack name>-CheckAuthStatusBatch`. */
  readonly stateMachineNames: Record<StateMachineKey, string>;
  /** Scheduled re-checks: their state machine, its functions and schedule (docs/rechecks.md). */
  readonly dueRechecks: DueRechecks;
  /** The scheduled payer functions (the subscription keeper), by name. */
  readonly scheduledFunctions: Record<string, ServiceFunction> = {};

  constructor(scope: Construct, id: string, props: AutomationStackProps) {
    super(scope, id, props);
    const { data } = props;
    this.addStackDependency(data);
    const logKey = data.keys.data;
    const { browserConcurrency } = serviceConfigOf(this);
    // Known before the machines exist: the run credentials function describes their executions.
    this.stateMachineNames = {
      viewOnPage: `${this.stackName}-${stateMachineNames.viewOnPage}`,
      checkAuthStatus: `${this.stackName}-${stateMachineNames.checkAuthStatus}`,
      submitToPayer: `${this.stackName}-${stateMachineNames.submitToPayer}`,
    };

    // The secrets key's policy names its readers (encryption-keys.ts): a reader's role name is fixed.
    const readerRole = (name: string, access: AutomationTask['access']) =>
      access.secrets === 'decrypt' ? { roleName: secretsReaderRoleName(this.stackName, name) } : {};
    for (const invoked of props.invokedFunctions) {
      const fn = new ServiceFunction(this, invoked.name, {
        handler: invoked.handler,
        invocation: 'invoked',
        logKey,
        timeout: Duration.seconds(invoked.timeoutSeconds),
        ...readerRole(invoked.name, invoked.access),
      });
      bindRouteAccess(fn, invoked.access, data, { stateMachineNames: this.stateMachineNames });
      this.invokeTargets[invoked.name] = { fn, environment: invoked.environment };
    }
    for (const task of props.tasks) {
      const fn = new ServiceFunction(this, task.name, {
        handler: task.handler,
        invocation: 'task',
        logKey,
        ...SIZING[task.worker],
        // Each invocation is a Chromium of up to 2 GB and a portal login: a bounded number at once.
        ...(task.worker === 'browser' ? { reservedConcurrency: browserConcurrency } : {}),
        ...readerRole(task.name, task.access),
      });
      bindRouteAccess(fn, task.access, data, { invokeTargets: this.invokeTargets });
      this.addPublicApiBaseUrl(fn, props, task.worker === 'payer');
      this.functions[task.name] = fn;
    }

    const functionOf = (name: string) => {
      const fn = this.functions[name as AutomationTaskName];
      if (!fn) throw new Error(`No automation task runs the Task state ${name}`);
      return fn;
    };
    const resources = Object.fromEntries(
      Object.entries(this.functions).map(([name, fn]) => [name, fn.function.functionArn]),
    ) as TaskResources;
    for (const key of Object.keys(stateMachineDefinitions) as StateMachineKey[]) {
      const definition = stateMachineDefinitions[key](resources);
      this.stateMachines[key] = new AutomationStateMachine(this, stateMachineNames[key], {
        stateMachineName: this.stateMachineNames[key],
        definition,
        functions: Object.keys(taskStatesOf(definition)).map(functionOf),
        logKey,
      });
    }
    this.addEventFunctions(props);
    this.dueRechecks = new DueRechecks(this, 'DueRechecks', {
      data,
      tasks: props.recheckTasks,
      stateMachineNames: this.stateMachineNames,
      stateMachineName: `${this.stackName}-${RECHECKS_STATE_MACHINE_NAME}`,
      logKey,
    });
    for (const row of props.scheduledPayerFunctions) this.addScheduledFunction(row, props);
  }

  /** Where payers notify us: the payer functions make PAS subscriptions with it. */
  private addPublicApiBaseUrl(fn: ServiceFunction, props: AutomationStackProps, payer = true) {
    if (payer && props.publicApiBaseUrl) fn.addEnvironment('PUBLIC_API_BASE_URL', props.publicApiBaseUrl);
  }

  /** A payer function on an EventBridge schedule, with the payer token function to invoke. */
  private addScheduledFunction(row: EventFunction<ScheduleTrigger>, props: AutomationStackProps) {
    const { everyMinutes } = row.trigger.schedule;
    const fn = new ServiceFunction(this, row.name, {
      handler: row.handler,
      invocation: 'event',
      logKey: props.data.keys.data,
      ...SIZING.payer,
      timeout: Duration.minutes(everyMinutes - 1),
      concurrencyBound: `Started once every ${everyMinutes} minutes by its schedule, within a timeout shorter than the period; runs that overlap write each subscription on its version.`,
    });
    bindRouteAccess(fn, row.access, props.data, { invokeTargets: this.invokeTargets });
    this.addPublicApiBaseUrl(fn, props);
    // A missed run is the next one's to do: no retry of an old one behind it.
    new Rule(this, `${row.name}Schedule`, {
      description: `${row.name} every ${everyMinutes} minutes`,
      schedule: Schedule.rate(Duration.minutes(everyMinutes)),
      targets: [
        new LambdaFunction(fn.function, {
          ...(fn.deadLetterQueue ? { deadLetterQueue: fn.deadLetterQueue } : {}),
          maxEventAge: Duration.minutes(1),
          retryAttempts: 0,
        }),
      ],
    });
    this.scheduledFunctions[row.name] = fn;
  }

  /** Each event function, told the three state machines' ARNs, behind a rule on their executions' status changes. */
  private addEventFunctions({ eventFunctions, data }: AutomationStackProps) {
    const machines = [
      this.stateMachines.viewOnPage!.stateMachine,
      this.stateMachines.checkAuthStatus!.stateMachine,
      this.stateMachines.submitToPayer!.stateMachine,
    ];
    for (const eventFunction of eventFunctions) {
      const fn = new ServiceFunction(this, eventFunction.name, {
        handler: eventFunction.handler,
        invocation: 'event',
        logKey: data.keys.data,
        ...SIZING.recorder,
      });
      bindRouteAccess(fn, eventFunction.access, data);
      // Which machine an event is about (lib/runs/recorder-service.ts); no Step Functions permission.
      fn.addEnvironment('VIEW_ON_PAGE_STATE_MACHINE_ARN', machines[0]!.stateMachineArn);
      fn.addEnvironment('CHECK_AUTH_STATUS_STATE_MACHINE_ARN', machines[1]!.stateMachineArn);
      fn.addEnvironment('SUBMIT_TO_PAYER_STATE_MACHINE_ARN', machines[2]!.stateMachineArn);
      const trigger = new ExecutionStatusTrigger(this, `${eventFunction.name}Trigger`, {
        fn,
        stateMachines: machines,
        trigger: eventFunction.trigger.executionStatusChange,
      });
      this.eventFunctions[eventFunction.name] = { fn, trigger };
    }
  }
}
