import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Validations } from 'aws-cdk-lib';
import {
  type AddToPrincipalPolicyResult,
  type IGrantable,
  type IPrincipal,
  ManagedPolicy,
  type PolicyStatement,
  Role,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { copyInstalledModules } from './installed-modules.ts';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ServiceFunctionProps {
  /** Module under functions/, without extension: a route's or an event function's `handler`. */
  handler: string;
  /**
   * `api`: invoked synchronously by API Gateway, so it must finish within the gateway's 29 s.
   * `event`: invoked asynchronously (S3); failed events land in a dead-letter queue.
   * `task`: invoked synchronously by a state machine's Task, which retries and catches its failures.
   */
  invocation: 'api' | 'event' | 'task';
  /** Encrypts the function's log group. */
  logKey: IKey;
  /** Overrides of the house defaults (1024 MB; 29 s for API functions, 5 minutes otherwise; arm64). */
  memorySize?: number;
  timeout?: Duration;
  architecture?: Architecture;
  /**
   * Packages left out of the bundle and shipped as installed, in `node_modules` beside it: for
   * packages that read their own files at run time (Chromium's compressed binary).
   */
  installedModules?: readonly string[];
}

/**
 * A role whose permissions, including those CDK grants (logs, X-Ray, dead-letter queue), all land
 * in one customer-managed policy of its own instead of an inline policy.
 */
export class ServiceRole extends Role {
  readonly policy: ManagedPolicy;

  constructor(scope: Construct, id: string, service = 'lambda.amazonaws.com') {
    super(scope, id, { assumedBy: new ServicePrincipal(service) });
    this.policy = new ManagedPolicy(this, 'Policy', { roles: [this] });
  }

  override addToPrincipalPolicy(statement: PolicyStatement): AddToPrincipalPolicyResult {
    this.policy.addStatements(statement);
    return { statementAdded: true, policyDependable: this.policy };
  }
}

/**
 * One Lambda function of the service with the house defaults: Node.js 22 on arm64, an ESM bundle
 * built by the local esbuild (no Docker) from the TypeScript sources, AWS SDK included so the
 * deployed clients are the ones tested, its own role (no AWS managed policy) and its own
 * KMS-encrypted log group, X-Ray tracing. Grants are added with the bind helpers of the resources.
 */
export class ServiceFunction extends Construct implements IGrantable {
  readonly function: NodejsFunction;
  readonly role: ServiceRole;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.role = new ServiceRole(this, 'Role');
    const logGroup = new LogGroup(this, 'Logs', { encryptionKey: props.logKey, retention: RetentionDays.ONE_YEAR });
    logGroup.grantWrite(this.role);
    const deadLetterQueue =
      props.invocation === 'event'
        ? new Queue(this, 'DeadLetters', {
            // Holds S3 event notifications (bucket, key, size), never file contents.
            encryption: QueueEncryption.SQS_MANAGED,
            enforceSSL: true,
            retentionPeriod: Duration.days(14),
          })
        : undefined;

    this.function = new NodejsFunction(this, 'Function', {
      entry: join(projectRoot, 'functions', `${props.handler}.ts`),
      projectRoot,
      depsLockFilePath: join(projectRoot, 'package-lock.json'),
      description: `functions/${props.handler}.ts`,
      runtime: Runtime.NODEJS_22_X,
      architecture: props.architecture ?? Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      timeout: props.timeout ?? (props.invocation === 'api' ? Duration.seconds(29) : Duration.minutes(5)),
      tracing: Tracing.ACTIVE,
      role: this.role,
      logGroup,
      deadLetterQueue,
      environment: { NODE_OPTIONS: '--enable-source-maps' },
      bundling: {
        format: OutputFormat.ESM,
        mainFields: ['module', 'main'],
        // ESM output still meets CommonJS dependencies that call require().
        banner:
          "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        externalModules: [...(props.installedModules ?? [])],
        forceDockerBundling: false,
        ...(props.installedModules?.length
          ? { commandHooks: copyInstalledModules(projectRoot, props.installedModules) }
          : {}),
      },
    });
    this.function.node.addDependency(this.role.policy);

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support no resource-level permissions.',
    });
    Validations.of(this.function).acknowledge(
      {
        id: 'AwsSolutions-L1',
        reason:
          'Node.js 22 on purpose: the runtime the code is built, tested and run locally with (Middy 7, Vitest 5).',
      },
      {
        id: 'HIPAA.Security-LambdaInsideVPC',
        reason:
          'The functions reach only AWS service endpoints (DynamoDB, S3, KMS), over TLS with IAM authentication; there is no private network resource to protect.',
      },
      {
        id: 'HIPAA.Security-LambdaConcurrency',
        reason:
          'Throughput is bounded at the API Gateway stage and usage plan; reserving concurrency per function would carve up the account pool and fail deploys in accounts with low limits.',
      },
    );
    if (props.invocation !== 'event') {
      Validations.of(this.function).acknowledge({
        id: 'HIPAA.Security-LambdaDLQ',
        reason:
          props.invocation === 'api'
            ? 'Invoked synchronously by API Gateway: the caller receives the error, and a DLQ only applies to asynchronous invocations.'
            : 'Invoked synchronously by a Step Functions Task, which retries and catches the error (the run is recorded failed); a DLQ only applies to asynchronous invocations.',
      });
    }
  }

  get grantPrincipal(): IPrincipal {
    return this.role;
  }

  addEnvironment(name: string, value: string) {
    this.function.addEnvironment(name, value);
  }
}
