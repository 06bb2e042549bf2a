import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnManagedPolicy } from 'aws-cdk-lib/aws-iam';
import type { ServiceFunction } from '#infra/constructs/service-function';
import { buildServiceReviewApp, type ServiceReviewAppOptions } from '#infra/service-review-app';
import type { RouteAccess } from '#lib/routes';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Handlers import the compiled validators (gitignored), which a fresh clone has not generated yet. */
export const ensureCompiledSchemas = () => {
  if (!existsSync(join(projectRoot, 'lib/validation/generated/validators.ts'))) {
    execFileSync('npm', ['run', 'build:schemas'], { cwd: projectRoot, stdio: 'ignore' });
  }
};

/**
 * Synthesizes the app offline, in-process, bundling every function with esbuild for real; the
 * cdk-nag packs run as part of it.
 */
export const synthesize = (options: Omit<ServiceReviewAppOptions, 'outdir'> = {}) => {
  ensureCompiledSchemas();
  const outdir = mkdtempSync(join(tmpdir(), 'service-review-cdk-'));
  const built = buildServiceReviewApp({ ...options, outdir });
  built.app.synth();
  return {
    ...built,
    dataTemplate: Template.fromStack(built.data),
    automationTemplate: Template.fromStack(built.automation),
    apiTemplate: Template.fromStack(built.api),
    cleanUp: () => rmSync(outdir, { recursive: true, force: true }),
  };
};

export interface Statement {
  actions: string[];
  /** The statement's resources as template JSON, to look for the logical ids they reference. */
  resources: string;
  condition?: Record<string, unknown>;
}

/** The statements of a function's own policy, as synthesized. */
export const statementsOf = (template: Template, fn: ServiceFunction): Statement[] => {
  const policyId = Stack.of(fn).getLogicalId(fn.role.policy.node.defaultChild as CfnManagedPolicy);
  const policy = template.toJSON().Resources[policyId];
  return policy.Properties.PolicyDocument.Statement.map((statement: any) => ({
    actions: [statement.Action].flat(),
    resources: JSON.stringify(statement.Resource),
    condition: statement.Condition,
  }));
};

/** The logical id of a construct's CloudFormation resource, e.g. a KMS key of the data stack. */
export const logicalIdOf = (construct: { node: { defaultChild?: unknown } }) =>
  Stack.of(construct as any).getLogicalId(construct.node.defaultChild as any);

/**
 * What a function may do, written out independently of infra/: logs and traces for everyone, its
 * dead-letter queue for an event function, then exactly what its declared access implies.
 */
export const expectedActions = (access: RouteAccess, invocation: 'api' | 'event' | 'task' = 'api'): string[] => {
  const actions = ['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTraceSegments', 'xray:PutTelemetryRecords'];
  if (invocation === 'event') actions.push('sqs:SendMessage');
  if (access.table) actions.push('dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query');
  if (access.table) actions.push('kms:Decrypt', 'kms:DescribeKey');
  if (access.table === 'readWrite') {
    actions.push('dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem');
    actions.push('kms:Encrypt', 'kms:GenerateDataKey');
  }
  for (const kind of access.bucket ?? []) {
    if (kind === 'read') actions.push('s3:GetObject', 's3:ListBucket', 'kms:Decrypt');
    if (kind === 'write' || kind === 'presign') actions.push('s3:PutObject', 'kms:GenerateDataKey');
    if (kind === 'delete') actions.push('s3:DeleteObject', 's3:DeleteObjectVersion', 's3:ListBucketVersions');
  }
  if (access.secrets === 'encrypt') actions.push('kms:GenerateDataKey', 'kms:Encrypt');
  if (access.cursors === 'sign')
    actions.push('secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret', 'kms:Decrypt');
  if (access.rpaTokens) actions.push('secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret', 'kms:Decrypt');
  if (access.secrets === 'decrypt') actions.push('kms:Decrypt');
  for (const kind of access.screenshots ?? []) {
    if (kind === 'read') actions.push('s3:GetObject', 'kms:Decrypt');
    if (kind === 'write') actions.push('s3:PutObject', 'kms:GenerateDataKey');
  }
  if (access.automation === 'start') actions.push('states:StartExecution');
  if (access.automation) actions.push('states:DescribeExecution');
  return [...new Set(actions)].sort();
};

export const actionsOf = (statements: Statement[]) => [...new Set(statements.flatMap((s) => s.actions))].sort();
