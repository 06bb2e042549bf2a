import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnManagedPolicy } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import type { ServiceFunction } from '#infra/constructs/service-function';
import { buildServiceReviewApp, type ServiceReviewAppOptions } from '#infra/service-review-app';
import { clientSettingsAttributes } from '#lib/entities/tenancy';
import type { RouteAccess, TableAction } from '#lib/routes/access-model';

/**
 * Synthesizes the app offline, in-process, bundling every function with esbuild for real; the
 * cdk-nag packs run as part of it.
 */
export const synthesize = (options: Omit<ServiceReviewAppOptions, 'outdir'> = {}) => {
  const outdir = mkdtempSync(join(tmpdir(), 'service-review-cdk-'));
  const built = buildServiceReviewApp({ ...options, outdir });
  built.app.synth();
  return {
    ...built,
    dataTemplate: Template.fromStack(built.data),
    automationTemplate: Template.fromStack(built.automation),
    /** The API stack's own template: the REST API, its methods, the authorizer, the event functions. */
    apiTemplate: Template.fromStack(built.api),
    /** The API stack's template and its areas' (the routes' functions). */
    apiTemplates: templatesOf(built.api),
    eventsTemplate: Template.fromStack(built.events),
    auditTemplate: Template.fromStack(built.audit),
    monitoringTemplate: Template.fromStack(built.monitoring),
    cleanUp: () => rmSync(outdir, { recursive: true, force: true }),
  };
};

const templates = new WeakMap<Stack, Template>();

/** The template of the stack `construct` is in, nested or not (read once per stack). */
export const templateOf = (construct: IConstruct): Template => {
  const stack = Stack.of(construct);
  const template = templates.get(stack) ?? Template.fromStack(stack);
  templates.set(stack, template);
  return template;
};

/** A stack's template and those of the stacks nested in it. */
export const templatesOf = (stack: Stack): Template[] => [
  templateOf(stack),
  ...stack.node
    .findAll()
    .filter((construct): construct is NestedStack => NestedStack.isNestedStack(construct))
    .map(templateOf),
];

/**
 * The resource a value of `stack`'s template names, as `<stack path>/<logical id>`: a Ref in the stack
 * itself, or followed through another stack's output (Fn::GetStackOutput) or a nested stack's (Fn::GetAtt
 * Outputs.…), to the resource that output is a Ref of.
 */
export const resourceNamedBy = (stack: Stack, value: any): string => {
  const fromOtherStack = value['Fn::GetStackOutput'];
  if (fromOtherStack) {
    const producer = stack.node.root.node
      .findAll()
      .find(
        (construct): construct is Stack => Stack.isStack(construct) && construct.stackName === fromOtherStack.StackName,
      );
    if (!producer) throw new Error(`No stack ${fromOtherStack.StackName}`);
    return resourceNamedBy(producer, outputOf(producer, fromOtherStack.OutputName));
  }
  const [nestedId, attribute] = value['Fn::GetAtt'] ?? [];
  if (typeof attribute === 'string' && attribute.startsWith('Outputs.')) {
    const nested = stack.node
      .findAll()
      .find(
        (construct): construct is NestedStack =>
          NestedStack.isNestedStack(construct) && logicalIdOf(construct) === nestedId,
      );
    if (!nested) throw new Error(`No nested stack ${nestedId} in ${stack.node.path}`);
    return resourceNamedBy(nested, outputOf(nested, attribute.slice('Outputs.'.length)));
  }
  if (typeof value.Ref !== 'string') throw new Error(`Not a reference: ${JSON.stringify(value)}`);
  return `${stack.node.path}/${value.Ref}`;
};
const outputOf = (stack: Stack, name: string) => templateOf(stack).toJSON().Outputs[name].Value;

export interface Statement {
  actions: string[];
  /** The statement's resources as template JSON, to look for the logical ids they reference. */
  resources: string;
  condition?: Record<string, unknown>;
}

/**
 * The statements of a function's own policies (scoped grants, then the unscoped actions), as synthesized
 * in its stack's template.
 */
export const statementsOf = (fn: ServiceFunction): Statement[] =>
  fn.role.policies.flatMap((policy) => {
    const policyId = Stack.of(fn).getLogicalId(policy.node.defaultChild as CfnManagedPolicy);
    return templateOf(fn)
      .toJSON()
      .Resources[policyId].Properties.PolicyDocument.Statement.map((statement: any) => ({
        actions: [statement.Action].flat(),
        resources: JSON.stringify(statement.Resource),
        condition: statement.Condition,
      }));
  });

/**
 * The logical id of a construct's CloudFormation resource, e.g. a KMS key of the data stack. Resolved
 * from the element, so an overridden id (functions' `<Name>Function`) is the one found in the template.
 */
export const logicalIdOf = (construct: { node: { defaultChild?: unknown } }) =>
  Stack.of(construct as any).resolve((construct.node.defaultChild as any).logicalId) as string;

/** The resources a function's grants may name, by what they are (the logical ids of the synthesized app). */
export interface ResourceIds {
  table: string;
  dataKey: string;
  secretsKey: string;
  cursorSecret: string;
  rpaTokenSecret: string;
  fingerprintSecret: string;
  /** The events stack's key (bus, delivery queues) and the delivery queue. */
  eventsKey: string;
  deliveryQueue: string;
}

export const resourceIdsOf = (synthesized: ReturnType<typeof synthesize>): ResourceIds => ({
  table: logicalIdOf(synthesized.data.table.table),
  dataKey: logicalIdOf(synthesized.data.keys.data),
  secretsKey: logicalIdOf(synthesized.data.keys.secrets),
  cursorSecret: logicalIdOf(synthesized.data.cursorSigning.secret),
  rpaTokenSecret: logicalIdOf(synthesized.data.rpaTokens.secret),
  fingerprintSecret: logicalIdOf(synthesized.data.requestFingerprints.secret),
  eventsKey: logicalIdOf(synthesized.events.key),
  deliveryQueue: logicalIdOf(synthesized.events.deliveries.queue),
});

/** What one resource of a statement is, e.g. `table`, `index gsi1`, `attachments` (objects), `bucket`. */
const labelOf = (resource: unknown, ids: ResourceIds): string => {
  const text = JSON.stringify(resource);
  if (resource === '*') return '*';
  if (text.includes(ids.table)) {
    const index = /\/index\/([\w-]+)/.exec(text);
    return index ? `index ${index[1]}` : 'table';
  }
  for (const name of [
    'dataKey',
    'secretsKey',
    'cursorSecret',
    'rpaTokenSecret',
    'fingerprintSecret',
    'eventsKey',
    'deliveryQueue',
  ] as const) {
    if (text.includes(ids[name])) return name;
  }
  if (text.includes('/*/requests/*/attachments/*"')) return 'attachments';
  if (text.includes('/*/rpa/*"')) return 'screenshots';
  if (text.includes('-attachments-')) return 'bucket';
  if (text.includes(':stateMachine:')) return 'stateMachines';
  if (text.includes(':execution:')) return 'executions';
  // A function's ARN (ServiceFunction's logical id `<Name>Function`): `{"Fn::GetAtt":["<Name>Function","Arn"]}`
  // in its own stack, that attribute as the other stack's output in another.
  const fn =
    /^\{"Fn::GetAtt":\["(\w+)Function","Arn"\]\}$/.exec(text) ??
    /^\{"Fn::GetStackOutput":\{.*"OutputName":"\w*OutputFnGetAtt(\w+)FunctionArn[0-9A-F]{8}"\}\}$/.exec(text);
  if (fn) return `function ${fn[1]}`;
  if (text.includes('DeadLetters')) return 'deadLetterQueue';
  if (text.includes('Logs')) return 'logGroup';
  return text;
};

/** A statement's condition in a few words; anything unexpected stays JSON, so it shows in a diff. */
const conditionOf = (condition: Record<string, Record<string, unknown>> | undefined): string => {
  if (!condition) return '';
  // Opening secrets of one kind: its purpose, and a client, in the encryption context.
  for (const purpose of ['webhook-signing-secret', 'portal-account-credential']) {
    const opening = {
      StringEquals: { 'kms:EncryptionContext:purpose': purpose },
      'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['clientId'] },
    };
    if (JSON.stringify(condition) === JSON.stringify(opening)) return ` for ${purpose} with clientId context`;
  }
  const [[operator, keys] = ['', {}], ...more] = Object.entries(condition);
  const [[key, value] = ['', ''], ...moreKeys] = Object.entries(keys);
  if (more.length > 0 || moreKeys.length > 0) return ` if ${JSON.stringify(condition)}`;
  const text = JSON.stringify(value);
  if (operator === 'StringEquals' && key === 'kms:ViaService') {
    const service = ['dynamodb', 's3', 'secretsmanager'].find((name) => text.includes(`"${name}.`));
    return ` via ${service ?? text}`;
  }
  if (operator === 'ForAnyValue:StringEquals' && key === 'kms:EncryptionContextKeys' && text === '["clientId"]') {
    return ' with clientId context';
  }
  if (operator === 'StringLike' && key === 's3:prefix') return ` if s3:prefix ${value}`;
  if (operator === 'ForAllValues:StringLike' && key === 'dynamodb:LeadingKeys') {
    return ` if dynamodb:LeadingKeys ${[value].flat().join(',')}`;
  }
  return ` if ${JSON.stringify(condition)}`;
};

/**
 * Every grant of a function's policies, one `<action> on <resource>[ condition]` each, sorted: what
 * the tests compare, in full, with expectedGrants.
 */
export const grantsOf = (statements: Statement[], ids: ResourceIds): string[] => {
  const grants = statements.flatMap((statement) =>
    [JSON.parse(statement.resources)]
      .flat()
      .flatMap((resource: unknown) =>
        statement.actions.map(
          (action) =>
            `${action} on ${labelOf(resource, ids)}${conditionOf(statement.condition as Record<string, Record<string, unknown>>)}`,
        ),
      ),
  );
  return [...new Set(grants)].sort();
};

type Invocation = 'api' | 'event' | 'task' | 'invoked' | 'queue';

/**
 * `clientSettings: 'read'`: GetItem in any client partition, of a Client item's attributes but its usage plan
 * key alone (and the keys), by projection.
 */
const clientSettingsRead = `dynamodb:GetItem on table if ${JSON.stringify({
  'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] },
  'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', ...clientSettingsAttributes] },
  StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
})}`;

/**
 * What a function may do, written out independently of infra/ (docs/infrastructure.md, "What each
 * function may do"): logs and traces for everyone (an audited route's audit records are log lines
 * too: no grant of their own), its dead-letter queue for an event function, receiving from its queue
 * (and the events key that encrypts it) for a queue consumer, then exactly what its declared access
 * implies, resource by resource.
 */
export const expectedGrants = (access: RouteAccess, invocation: Invocation = 'api'): string[] => {
  const grants = [
    'logs:CreateLogStream on logGroup',
    'logs:PutLogEvents on logGroup',
    'xray:PutTraceSegments on *',
    'xray:PutTelemetryRecords on *',
  ];
  if (invocation === 'event') grants.push('sqs:SendMessage on deadLetterQueue');
  if (invocation === 'queue') {
    grants.push(
      ...['ReceiveMessage', 'DeleteMessage', 'ChangeMessageVisibility', 'GetQueueAttributes', 'GetQueueUrl'].map(
        (action) => `sqs:${action} on deliveryQueue`,
      ),
      'kms:Decrypt on eventsKey',
    );
  }
  const dataKeyVia = (service: string, ...actions: string[]) =>
    grants.push(...actions.map((action) => `kms:${action} on dataKey via ${service}`));
  if (access.table) {
    const { actions, queryIndexes = [], leadingKeys, clientSettings } = access.table;
    // One list for every action as declared; a list per action sorted, each action its own.
    const partitionsOf = (action: TableAction) =>
      leadingKeys === undefined || Array.isArray(leadingKeys)
        ? (leadingKeys as readonly string[] | undefined)
        : [...new Set((leadingKeys as Partial<Record<TableAction, string[]>>)[action] ?? [])].sort();
    grants.push(
      ...actions.map((action) => {
        const partitions = partitionsOf(action);
        return `dynamodb:${action} on table${partitions ? ` if dynamodb:LeadingKeys ${partitions.join(',')}` : ''}`;
      }),
    );
    if (clientSettings) grants.push(clientSettingsRead);
    grants.push(...queryIndexes.map((index) => `dynamodb:Query on index ${index}`));
    dataKeyVia('dynamodb', 'Decrypt', 'DescribeKey');
    if (actions.some((action) => ['PutItem', 'UpdateItem', 'DeleteItem'].includes(action))) {
      dataKeyVia('dynamodb', 'Encrypt', 'GenerateDataKey');
    }
  }
  const attachmentKeys = ' if s3:prefix */requests/*/attachments/*';
  for (const kind of access.bucket ?? []) {
    if (kind === 'read') {
      grants.push('s3:GetObject on attachments', `s3:ListBucket on bucket${attachmentKeys}`);
      dataKeyVia('s3', 'Decrypt');
    }
    if (kind === 'write' || kind === 'presign') {
      grants.push('s3:PutObject on attachments');
      dataKeyVia('s3', 'GenerateDataKey');
    }
    if (kind === 'delete') {
      grants.push(
        's3:DeleteObject on attachments',
        's3:DeleteObjectVersion on attachments',
        `s3:ListBucketVersions on bucket${attachmentKeys}`,
      );
    }
  }
  if (access.secrets === 'encrypt') {
    grants.push('kms:GenerateDataKey on secretsKey with clientId context');
  }
  if (access.secrets === 'decrypt') {
    grants.push('kms:Decrypt on secretsKey for portal-account-credential with clientId context');
  }
  if (access.webhookSecrets === 'open') {
    grants.push('kms:Decrypt on secretsKey for webhook-signing-secret with clientId context');
  }
  if (access.payerAssertions === 'sign') {
    // The account's keys tagged for payer assertions (created at run time by operators: no ARN to name).
    const keys = JSON.stringify({
      'Fn::Join': [
        '',
        ['arn:', { Ref: 'AWS::Partition' }, ':kms:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':key/*'],
      ],
    });
    const tagged = { 'aws:ResourceTag/service-review:purpose': 'payer-assertion-signing' };
    grants.push(
      `kms:GetPublicKey on ${keys} if ${JSON.stringify({ StringEquals: tagged })}`,
      `kms:Sign on ${keys} if ${JSON.stringify({
        StringEquals: { ...tagged, 'kms:SigningAlgorithm': 'RSASSA_PKCS1_V1_5_SHA_384', 'kms:MessageType': 'RAW' },
      })}`,
    );
  }
  const secretReader = (secret: string) => {
    grants.push(`secretsmanager:GetSecretValue on ${secret}`, `secretsmanager:DescribeSecret on ${secret}`);
    dataKeyVia('secretsmanager', 'Decrypt');
  };
  if (access.cursors === 'sign') secretReader('cursorSecret');
  if (access.rpaTokens) secretReader('rpaTokenSecret');
  if (access.requestFingerprints) secretReader('fingerprintSecret');
  for (const kind of access.screenshots ?? []) {
    if (kind === 'read') {
      grants.push('s3:GetObject on screenshots');
      dataKeyVia('s3', 'Decrypt');
    }
    if (kind === 'write') {
      grants.push('s3:PutObject on screenshots');
      dataKeyVia('s3', 'GenerateDataKey');
    }
  }
  if (access.automation === 'start') grants.push('states:StartExecution on stateMachines');
  if (access.automation) grants.push('states:DescribeExecution on executions');
  for (const name of access.invoke ?? []) grants.push(`lambda:InvokeFunction on function ${name}`);
  return [...new Set(grants)].sort();
};

/** The actions alone of expectedGrants. */
export const expectedActions = (access: RouteAccess, invocation: Invocation = 'api'): string[] =>
  [...new Set(expectedGrants(access, invocation).map((grant) => grant.split(' ')[0]!))].sort();

export const actionsOf = (statements: Statement[]) => [...new Set(statements.flatMap((s) => s.actions))].sort();
