import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { ExecutionStatusTrigger as Trigger } from '#lib/routes/event-functions';
import type { ServiceFunction } from './service-function.ts';

export interface ExecutionStatusTriggerProps {
  /** Invoked asynchronously with each matching event; a failed delivery lands in its dead-letter queue. */
  fn: ServiceFunction;
  /** Only these state machines' executions. */
  stateMachines: readonly IStateMachine[];
  trigger: Trigger['executionStatusChange'];
}

/**
 * An EventBridge rule (default bus) on Step Functions' "Execution Status Change" events of these
 * state machines, for the trigger's statuses, targeting the function. Step Functions sends these
 * events without any setting; EventBridge retries a failed invocation (24 h, 185 attempts) and then
 * sends the event to the function's dead-letter queue, as Lambda does with its own async retries.
 */
export class ExecutionStatusTrigger extends Construct {
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: ExecutionStatusTriggerProps) {
    super(scope, id);
    this.rule = new Rule(this, 'Rule', {
      description: `${props.trigger.statuses.join(', ')} executions of the automation's state machines`,
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          status: [...props.trigger.statuses],
          stateMachineArn: props.stateMachines.map((machine) => machine.stateMachineArn),
        },
      },
      targets: [
        new LambdaFunction(props.fn.function, {
          ...(props.fn.deadLetterQueue ? { deadLetterQueue: props.fn.deadLetterQueue } : {}),
        }),
      ],
    });
  }
}
