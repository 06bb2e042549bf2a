import { DescribeExecutionCommand, ExecutionDoesNotExist } from '@aws-sdk/client-sfn';
import { sfn } from '#lib/aws/sfn';
import type { AutomationMachine, ExecutionStatus } from './automation-starter.ts';
import type { ExecutionReader } from './execution-reader.ts';
import { stateMachineArnOf } from './state-machine-arns.ts';

/** `arn:…:stateMachine:<machine>` → `arn:…:execution:<machine>:<name>`, the ARN Step Functions gives it. */
const executionArnOf = (machine: AutomationMachine, name: string) =>
  `${stateMachineArnOf[machine]().replace(':stateMachine:', ':execution:')}:${name}`;

/** What Step Functions takes as an execution's name (ours are UUIDs); anything else names no execution. */
const EXECUTION_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** DescribeExecution through the module-scope client (AWS_ENDPOINT_URL_SFN locally). */
export const sfnExecutionReader: ExecutionReader = {
  read: async (machine, name) => {
    if (!EXECUTION_NAME.test(name)) return undefined;
    try {
      const { status, input } = await sfn.send(
        new DescribeExecutionCommand({ executionArn: executionArnOf(machine, name) }),
      );
      return { status: (status ?? 'RUNNING') as ExecutionStatus, input: input ?? '' };
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist) return undefined;
      throw error;
    }
  },
};
