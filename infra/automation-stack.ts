import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Architecture } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { AutomationStateMachine } from '#infra/constructs/automation-state-machine';
import { secretsReaderRoleName } from '#infra/constructs/encryption-keys';
import { bindRouteAccess, type InvokeTarget } from '#infra/constructs/route-access';
import { ServiceFunction, type ServiceFunctionProps } from '#infra/constructs/service-function';
import type { DataStack } from '#infra/data-stack';
import type { AutomationTask, AutomationTaskName, InvokedFunction, InvokedFunctionName } from '#lib/routes';
import {
  type StateMachineKey,
  stateMachineDefinitions,
  stateMachineNames,
  type TaskResources,
  TIMEOUTS,
  taskStatesOf,
} from '#lib/rpa/state-machines';

export interface AutomationStackProps extends StackProps {
  data: DataStack;
  /** The automation task table (lib/routes.ts): one function per Task state. */
  tasks: readonly AutomationTask[];
  /** The functions the tasks invoke (lib/routes.ts `invokedFunctions`: the run credentials function). */
  invokedFunctions: readonly InvokedFunction[];
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
};

/**
 * Service-review automation: one function per automation task (the browser workers and the
 * recorders) and per function they invoke (the run credentials function, which alone may decrypt
 * portal secrets), each with the access its row declares, and the two state machines of
 * lib/rpa/state-machines.ts bound to the tasks' functions. The API stack starts executions by the
 * machines' names.
 */
export class AutomationStack extends Stack {
  readonly functions: Partial<Record<AutomationTaskName, ServiceFunction>> = {};
  /** The invoked functions, created before the tasks that invoke them. */
  readonly invokeTargets: Partial<Record<InvokedFunctionName, InvokeTarget>> = {};
  readonly stateMachines: Partial<Record<StateMachineKey, AutomationStateMachine>> = {};
  /** `<stack name>-ViewOnPage`, `<stack name>-CheckAuthStatusBatch`. */
  readonly stateMachineNames: Record<StateMachineKey, string>;

  constructor(scope: Construct, id: string, props: AutomationStackProps) {
    super(scope, id, props);
    const { data } = props;
    this.addStackDependency(data);
    const logKey = data.keys.data;
    // Known before the machines exist: the run credentials function describes their executions.
    this.stateMachineNames = {
      viewOnPage: `${this.stackName}-${stateMachineNames.viewOnPage}`,
      checkAuthStatus: `${this.stackName}-${stateMachineNames.checkAuthStatus}`,
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
        ...readerRole(task.name, task.access),
      });
      bindRouteAccess(fn, task.access, data, { invokeTargets: this.invokeTargets });
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
  }
}
