import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { payerRecheckEverySeconds, recheckEverySeconds } from '#lib/config/settings';
import { dueRechecksDefinition, type RecheckTaskResources } from '#lib/rechecks/state-machine';
import { recheckTasks } from '#lib/routes/automation-tasks';
import { functionArnOf } from './arns.ts';
import { type HandlerLoader, lambdaContext } from './gateway/invoke.ts';
import { type PeriodicRun, periodicRun } from './periodic-run.ts';

/*
 * The re-check timer of the local stack (docs/rechecks.md): every RECHECK_EVERY_SECONDS or
 * PAYER_RECHECK_EVERY_SECONDS, the shorter (also the first back-off steps, so a demo with a few seconds
 * sees a re-check within seconds) it runs the DueRechecks
 * state machine, the definition EventBridge Scheduler starts on AWS, with each Task bound to the same
 * handler. A run still under way when the next tick comes is not doubled.
 */
export type RecheckTimer = PeriodicRun;

export const startRecheckTimer = (
  loadHandler: HandlerLoader,
  // As often as the shorter first step asks: a payer-API re-check is due sooner than a portal's.
  intervalMs = Math.min(recheckEverySeconds(), payerRecheckEverySeconds()) * 1000,
): RecheckTimer => {
  const resources = Object.fromEntries(
    recheckTasks.map((task) => [task.name, functionArnOf(task.name)]),
  ) as RecheckTaskResources;
  const machine = new StateMachine(dueRechecksDefinition(resources) as StateMachineDefinition);
  const taskResourceLocalHandlers = Object.fromEntries(
    recheckTasks.map((task) => [
      task.name,
      // A JSON copy each way, as Lambda passes events and results.
      async (input: unknown) =>
        JSON.parse(JSON.stringify(await (await loadHandler(task.handler))(input, lambdaContext(task.name)))),
    ]),
  );
  const run = async () => {
    try {
      await machine.run({}, { overrides: { taskResourceLocalHandlers } }).result;
    } catch (error) {
      // The next tick tries again: the schedule holds what is still due.
      process.stderr.write(`local re-checks: ${(error as Error).name}\n`);
    }
  };
  return periodicRun(run, intervalMs);
};
