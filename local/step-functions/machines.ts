import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { automationTasks } from '#lib/routes/automation-tasks';
import {
  type DefinitionOptions,
  type StateMachineKey,
  stateMachineDefinitions,
  stateMachineNames,
  type TaskResources,
  taskStatesOf,
} from '#lib/runs/state-machines';
import { functionArnOf } from '../arns.ts';
import { type Machine, stateMachineArnOf } from './model.ts';

/**
 * The constructor validates a definition (asl-validator), as CreateStateMachine would; that takes
 * about half a second, so a definition already validated in this process is not validated again.
 */
const validated = new Set<string>();
export const stateMachineOf = (definition: StateMachineDefinition) => {
  const text = JSON.stringify(definition);
  const machine = new StateMachine(definition, { validationOptions: { noValidate: validated.has(text) } });
  validated.add(text);
  return machine;
};

/** The definitions of lib/runs/state-machines.ts, each Task bound to its function's ARN; by the machine's ARN. */
export function machinesOf(definitionOptions: DefinitionOptions | undefined): Map<string, Machine> {
  const resources = Object.fromEntries(automationTasks.map((task) => [task.name, functionArnOf(task.name)]));
  const machines = new Map<string, Machine>();
  for (const key of Object.keys(stateMachineDefinitions) as StateMachineKey[]) {
    const definition = stateMachineDefinitions[key](resources as TaskResources, definitionOptions);
    const taskTimeouts = Object.fromEntries(
      Object.entries(taskStatesOf(definition)).map(([name, state]) => [name, state.TimeoutSeconds as number]),
    );
    const name = stateMachineNames[key];
    const arn = stateMachineArnOf(name);
    machines.set(arn, { key, name, arn, definition: definition as StateMachineDefinition, taskTimeouts });
  }
  return machines;
}
