import { Aws, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { serviceConfigOf } from '#infra/config';
import type { RouteAccess } from '#lib/routes/access-model';
import type { AslDefinition, StateMachineKey } from '#lib/runs/state-machines';
import { type ServiceFunction, ServiceRole, type UnscopedActions } from './service-function.ts';

/** What Step Functions grants itself on `*` to deliver logs and traces (aws-stepfunctions' StateMachine). */
const LOGGING_AND_TRACING: UnscopedActions = {
  actions: [
    'logs:CreateLogDelivery',
    'logs:GetLogDelivery',
    'logs:UpdateLogDelivery',
    'logs:DeleteLogDelivery',
    'logs:ListLogDeliveries',
    'logs:PutResourcePolicy',
    'logs:DescribeResourcePolicies',
    'logs:DescribeLogGroups',
    'xray:PutTraceSegments',
    'xray:PutTelemetryRecords',
    'xray:GetSamplingRules',
    'xray:GetSamplingTargets',
  ],
  reason:
    'Log delivery (logs:CreateLogDelivery, PutResourcePolicy, DescribeLogGroups…) and X-Ray (PutTraceSegments, GetSamplingRules…) support no resource-level permissions; Step Functions requires them on * to log and trace.',
};

export interface AutomationStateMachineProps {
  /** Its name in AWS; the API stack addresses it by this name. */
  stateMachineName: string;
  /** From lib/runs/state-machines.ts, with the functions' ARNs. */
  definition: AslDefinition;
  /** The functions its Tasks invoke. */
  functions: ServiceFunction[];
  /** Encrypts its log group. */
  logKey: IKey;
}

/**
 * A standard state machine running an ASL definition of lib/runs/state-machines.ts: every event
 * logged (ALL) without execution data to its own KMS-encrypted log group, X-Ray tracing, and a role
 * that may invoke exactly its task functions (one customer-managed policy, like the functions').
 */
export class AutomationStateMachine extends Construct {
  readonly stateMachine: StateMachine;
  readonly role: ServiceRole;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: AutomationStateMachineProps) {
    super(scope, id);
    this.role = new ServiceRole(this, 'Role', { service: 'states.amazonaws.com', unscoped: LOGGING_AND_TRACING });
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: props.functions.map((fn) => fn.function.functionArn),
      }),
    );
    // Step Functions delivers its logs as vended logs: the /aws/vendedlogs/ prefix keeps the log
    // delivery resource policy from growing with every state machine.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${props.stateMachineName}`,
      encryptionKey: props.logKey,
      retention: serviceConfigOf(this).logRetention,
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(Stack.of(this).toJsonString(props.definition)),
      role: this.role,
      // Every state transition, but never inputs or outputs (ids only anyway, yet logs are not the place).
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });
    this.stateMachine.node.addDependency(...this.role.policies);
  }
}

const statesArn = (resource: string) => `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:${resource}`;

/**
 * `automation` access: the three state machines' ARNs (VIEW_ON_PAGE_STATE_MACHINE_ARN,
 * CHECK_AUTH_STATUS_STATE_MACHINE_ARN, SUBMIT_TO_PAYER_STATE_MACHINE_ARN), StartExecution on them for `start`, DescribeExecution on
 * their executions for both. Built from their names with the caller's own pseudo parameters, like
 * the attachments bucket: no cross-stack export pins the state machines.
 */
export const bindAutomation = (
  fn: ServiceFunction,
  names: Record<StateMachineKey, string>,
  mode: NonNullable<RouteAccess['automation']>,
) => {
  const machines = [names.viewOnPage, names.checkAuthStatus, names.submitToPayer];
  fn.addEnvironment('VIEW_ON_PAGE_STATE_MACHINE_ARN', statesArn(`stateMachine:${names.viewOnPage}`));
  fn.addEnvironment('CHECK_AUTH_STATUS_STATE_MACHINE_ARN', statesArn(`stateMachine:${names.checkAuthStatus}`));
  fn.addEnvironment('SUBMIT_TO_PAYER_STATE_MACHINE_ARN', statesArn(`stateMachine:${names.submitToPayer}`));
  if (mode === 'start') {
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['states:StartExecution'],
        resources: machines.map((name) => statesArn(`stateMachine:${name}`)),
      }),
    );
  }
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['states:DescribeExecution'],
      resources: machines.map((name) => statesArn(`execution:${name}:*`)),
    }),
  );
  for (const name of machines) {
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${name}:*]`,
      reason:
        'Execution names are the run or batch ids, chosen per request: IAM limits the function to describing executions of this one state machine.',
    });
  }
};
