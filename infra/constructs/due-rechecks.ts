import { Duration } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { StepFunctionsStartExecution } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import type { DataStack } from '#infra/data-stack';
import {
  dueRechecksDefinition,
  RECHECK_TIMEOUTS,
  RECHECKS_STATE_MACHINE_NAME,
  type RecheckTaskName,
  type RecheckTaskResources,
} from '#lib/rechecks/state-machine';
import type { RecheckTask } from '#lib/routes/automation-tasks';
import type { StateMachineKey } from '#lib/runs/state-machines';
import { AutomationStateMachine } from './automation-state-machine.ts';
import { bindRouteAccess } from './route-access.ts';
import { ServiceFunction, ServiceRole } from './service-function.ts';

/** How often EventBridge Scheduler starts DueRechecks: a re-check comes at most this long after it is due. */
const RECHECK_SCHEDULE_MINUTES = 15;

export interface DueRechecksProps {
  data: DataStack;
  /** The re-check task table (lib/routes/automation-tasks.ts `recheckTasks`): one function per Task state. */
  tasks: readonly RecheckTask[];
  /** The automation's state machines, which StartRecheckBatch starts batches on (as a client's start does). */
  stateMachineNames: Record<StateMachineKey, string>;
  /** `<stack name>-DueRechecks`. */
  stateMachineName: string;
  logKey: IKey;
}

/**
 * Scheduled re-checks (docs/rechecks.md): the DueRechecks state machine of lib/rechecks/state-machine.ts
 * bound to its two task functions, each with the access its row declares, and the EventBridge Scheduler
 * schedule that starts it every RECHECK_SCHEDULE_MINUTES with an empty input (its own role may start this
 * machine only). An execution still running when the next starts is harmless: each re-check is moved on
 * conditionally before its batch starts.
 */
export class DueRechecks extends Construct {
  readonly functions: Partial<Record<RecheckTaskName, ServiceFunction>> = {};
  readonly stateMachine: AutomationStateMachine;
  readonly schedule: Schedule;

  constructor(scope: Construct, id: string, props: DueRechecksProps) {
    super(scope, id);
    for (const task of props.tasks) {
      const fn = new ServiceFunction(this, task.name, {
        handler: task.handler,
        invocation: 'task',
        logKey: props.logKey,
        timeout: Duration.seconds(RECHECK_TIMEOUTS.task),
      });
      bindRouteAccess(fn, task.access, props.data, { stateMachineNames: props.stateMachineNames });
      this.functions[task.name] = fn;
    }
    const functionOf = (name: RecheckTaskName) => {
      const fn = this.functions[name];
      if (!fn) throw new Error(`No re-check task runs the Task state ${name}`);
      return fn;
    };
    const resources: RecheckTaskResources = {
      SelectDueRechecks: functionOf('SelectDueRechecks').function.functionArn,
      StartRecheckBatch: functionOf('StartRecheckBatch').function.functionArn,
    };
    this.stateMachine = new AutomationStateMachine(this, RECHECKS_STATE_MACHINE_NAME, {
      stateMachineName: props.stateMachineName,
      definition: dueRechecksDefinition(resources),
      functions: Object.values(this.functions),
      logKey: props.logKey,
    });
    // The house's role (a customer-managed policy, no inline one): the target grants it StartExecution on this machine.
    const role = new ServiceRole(this, 'ScheduleRole', {
      service: 'scheduler.amazonaws.com',
      unscoped: { actions: [], reason: 'None: the schedule starts one state machine.' },
    });
    this.schedule = new Schedule(this, 'Schedule', {
      schedule: ScheduleExpression.rate(Duration.minutes(RECHECK_SCHEDULE_MINUTES)),
      description: 'Starts DueRechecks: the undecided authorizations due for a re-check (docs/rechecks.md)',
      target: new StepFunctionsStartExecution(this.stateMachine.stateMachine, {
        role,
        // A start that failed is worth little once the next is near: a few tries within the interval.
        retryAttempts: 2,
        maxEventAge: Duration.minutes(RECHECK_SCHEDULE_MINUTES - 5),
      }),
    });
  }
}
