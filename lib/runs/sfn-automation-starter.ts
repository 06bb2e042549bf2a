import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { sfn } from '#lib/aws/sfn';
import type { AutomationStarter, ExecutionStatus } from './automation-starter.ts';
import { stateMachineArnOf } from './state-machine-arns.ts';

/** Step Functions through the module-scope client (AWS_ENDPOINT_URL_SFN locally). */
export const sfnAutomationStarter: AutomationStarter = {
  start: async (machine, name, input) => {
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: stateMachineArnOf[machine](), name, input: JSON.stringify(input) }),
    );
    if (!executionArn) throw new Error('StartExecution returned no executionArn');
    return executionArn;
  },
  describe: async (executionArn) => {
    try {
      const { status } = await sfn.send(new DescribeExecutionCommand({ executionArn }));
      return { status: (status ?? 'RUNNING') as ExecutionStatus };
    } catch (error) {
      // Never started, gone after Step Functions' retention, or (locally) lost with the stand-in's memory.
      if ((error as Error).name === 'ExecutionDoesNotExist') return undefined;
      throw error;
    }
  },
};
