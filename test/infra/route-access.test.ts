import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '#infra/config';
import { grantSecretsDecrypt } from '#infra/constructs/encryption-keys';
import { powertoolsEnvironment, type ServiceFunction } from '#infra/constructs/service-function';
import { type RouteAccess, routeAccess } from '#lib/routes/access-model';
import type { EventFunction } from '#lib/routes/event-functions';
import { functionNameOf, type HandlerId, type Route } from '#lib/routes/route-table';
import {
  actionsOf,
  expectedActions,
  expectedGrants,
  grantsOf,
  logicalIdOf,
  resourceIdsOf,
  statementsOf,
  synthesize,
  templateOf,
} from './synthesized-app.ts';

/*
 * The real route table exercises only the access kinds its rows use today. These synthetic rows
 * (all bundling one small real handler) cover every kind, and an event function with a filter,
 * so the binders and the S3 wiring are checked before a real row needs them.
 */
const handler = 'schemas/list-schemas';
const route = (name: string, routeHandler: HandlerId = handler): Route => ({
  method: 'GET',
  path: `/api/external/test/${name}`,
  handler: routeHandler,
});
const syntheticRoutes = [route('table-read', 'schemas/get-schema'), route('everything')];
/** The synthetic rows' access, by their handlers; the other handlers keep theirs. */
const syntheticAccess: Record<HandlerId, RouteAccess> = {
  ...routeAccess,
  'schemas/get-schema': { table: { actions: ['GetItem'], queryIndexes: ['gsi1', 'gsi3'] }, automation: 'read' },
  'schemas/list-schemas': {
    table: {
      actions: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'],
      leadingKeys: ['TEST#*'],
    },
    bucket: ['read', 'write', 'delete', 'presign'],
    secrets: 'encrypt',
    cursors: 'sign',
    rpaTokens: 'verify',
    requestFingerprints: 'sign',
    screenshots: ['read', 'write'],
    automation: 'start',
    invoke: ['IssueRunCredentials'],
    webhookSecrets: 'open',
  },
};
const syntheticEvent: EventFunction = {
  name: 'ProcessTestUpload',
  handler,
  trigger: { s3ObjectCreated: { prefix: 'uploads/', suffix: '.pdf' } },
  access: { table: { actions: ['GetItem', 'DeleteItem'] }, bucket: ['read', 'delete'] },
};

let synthesized: ReturnType<typeof synthesize>;
beforeAll(() => {
  synthesized = synthesize({ routes: syntheticRoutes, routeAccess: syntheticAccess, eventFunctions: [syntheticEvent] });
}, 120_000);
afterAll(() => synthesized?.cleanUp());

const functionNamed = (name: string) => synthesized.api.functions[name]!;
/** Every function's Powertools settings (service-function.ts), besides what its access binds. */
const POWERTOOLS_VARIABLES = Object.keys(powertoolsEnvironment(DEFAULT_CONFIG)).sort();
const envOf = (fn: ServiceFunction) =>
  templateOf(fn).toJSON().Resources[logicalIdOf(fn.function)].Properties.Environment.Variables;

describe('route access binders', () => {
  it('grant every access kind exactly its actions on its resources, and pass the resource names', () => {
    for (const row of syntheticRoutes) {
      const fn = functionNamed(functionNameOf(row));
      expect(grantsOf(statementsOf(fn), resourceIdsOf(synthesized))).toEqual(
        expectedGrants(syntheticAccess[row.handler]),
      );
      expect(actionsOf(statementsOf(fn))).toEqual(expectedActions(syntheticAccess[row.handler]));
    }
    // Reading only: the data key decrypts, never encrypts; the index is queried, the table is not.
    expect(grantsOf(statementsOf(functionNamed('GetSchema')), resourceIdsOf(synthesized))).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem on table',
        'dynamodb:Query on index gsi1',
        'dynamodb:Query on index gsi3',
        'kms:Decrypt on dataKey via dynamodb',
      ]),
    );
    expect(
      grantsOf(statementsOf(functionNamed('GetSchema')), resourceIdsOf(synthesized)).filter((grant) =>
        /dynamodb:Query on table|kms:Encrypt|kms:GenerateDataKey/.test(grant),
      ),
    ).toEqual([]);
    expect(Object.keys(envOf(functionNamed('GetSchema'))).sort()).toEqual([
      'CHECK_AUTH_STATUS_STATE_MACHINE_ARN',
      ...POWERTOOLS_VARIABLES,
      'SUBMIT_TO_PAYER_STATE_MACHINE_ARN',
      'TABLE_NAME',
      'VIEW_ON_PAGE_STATE_MACHINE_ARN',
    ]);
    expect(Object.keys(envOf(functionNamed('ListSchemas'))).sort()).toEqual([
      'BUCKET_NAME',
      'CHECK_AUTH_STATUS_STATE_MACHINE_ARN',
      'CURSOR_SIGNING_SECRET_ARN',
      'IDEMPOTENCY_FINGERPRINT_SECRET_ARN',
      ...POWERTOOLS_VARIABLES,
      'RPA_TOKEN_SECRET_ARN',
      'RUN_CREDENTIALS_FUNCTION_NAME',
      'SECRETS_KEY_ID',
      'SUBMIT_TO_PAYER_STATE_MACHINE_ARN',
      'TABLE_NAME',
      'VIEW_ON_PAGE_STATE_MACHINE_ARN',
    ]);
  });

  it('let invoke access invoke exactly the named function, by its ARN alone, and pass its name', () => {
    const target = synthesized.automation.invokeTargets.IssueRunCredentials!;
    const invoking = statementsOf(functionNamed('ListSchemas')).filter((statement) =>
      statement.actions.some((action) => action.startsWith('lambda:')),
    );
    expect(invoking).toEqual([
      { actions: ['lambda:InvokeFunction'], resources: expect.any(String), condition: undefined },
    ]);
    // One resource: the function's ARN, the automation stack's output (no `:*` for versions, no other function).
    const [resource] = invoking.map((statement) => JSON.parse(statement.resources));
    const functionId = logicalIdOf(target.fn.function);
    expect(resource).toEqual({
      'Fn::GetStackOutput': expect.objectContaining({
        StackName: synthesized.automation.stackName,
        OutputName: expect.stringMatching(new RegExp(`FnGetAtt${functionId}Arn[0-9A-F]{8}$`)),
      }),
    });
    expect(envOf(functionNamed('ListSchemas')).RUN_CREDENTIALS_FUNCTION_NAME).toEqual({
      'Fn::GetStackOutput': expect.objectContaining({
        StackName: synthesized.automation.stackName,
        OutputName: expect.stringMatching(new RegExp(`Ref${functionId}[0-9A-F]{8}$`)),
      }),
    });
    expect(target.environment).toBe('RUN_CREDENTIALS_FUNCTION_NAME');
    // A function without the access has neither.
    expect(envOf(functionNamed('GetSchema')).RUN_CREDENTIALS_FUNCTION_NAME).toBeUndefined();
  });

  it('let automation access start (start) and describe (both) executions of exactly the three state machines', () => {
    const { viewOnPage, checkAuthStatus, submitToPayer } = synthesized.automation.stateMachineNames;
    // Each resource is an ARN joined from pseudo parameters; its last part names the machine.
    const onStates = (name: string) =>
      statementsOf(functionNamed(name))
        .filter((statement) => statement.actions.some((action) => action.startsWith('states:')))
        .map(({ actions, resources, condition }) => ({
          actions,
          resources: (JSON.parse(resources) as Array<{ 'Fn::Join': [string, string[]] }>)
            .map((arn) => arn['Fn::Join'][1].at(-1))
            .sort(),
          condition,
        }));
    const describeExecutions = {
      actions: ['states:DescribeExecution'],
      resources: [`:execution:${checkAuthStatus}:*`, `:execution:${submitToPayer}:*`, `:execution:${viewOnPage}:*`],
      condition: undefined,
    };
    expect(onStates('ListSchemas')).toEqual([
      {
        actions: ['states:StartExecution'],
        resources: [
          `:stateMachine:${checkAuthStatus}`,
          `:stateMachine:${submitToPayer}`,
          `:stateMachine:${viewOnPage}`,
        ],
        condition: undefined,
      },
      describeExecutions,
    ]);
    expect(onStates('GetSchema')).toEqual([describeExecutions]);
    expect(envOf(functionNamed('GetSchema')).VIEW_ON_PAGE_STATE_MACHINE_ARN['Fn::Join'][1].at(-1)).toBe(
      `:stateMachine:${viewOnPage}`,
    );
    expect(viewOnPage).toBe(`${synthesized.automation.stackName}-ViewOnPage`);
  });

  it('scope object actions to attachment objects, listing to their keys, key use to the service', () => {
    const statements = statementsOf(functionNamed('ListSchemas'));
    const onS3 = statements.filter((statement) => statement.actions.some((action) => action.startsWith('s3:')));
    expect(onS3).toEqual([
      {
        actions: ['s3:DeleteObject', 's3:DeleteObjectVersion', 's3:GetObject', 's3:PutObject'],
        resources: expect.stringMatching(/attachments-.*\/\*\/requests\/\*\/attachments\/\*"\]\]\}$/),
        condition: undefined,
      },
      {
        // Listing only with a prefix of attachment keys, never the whole bucket.
        actions: ['s3:ListBucket', 's3:ListBucketVersions'],
        resources: expect.stringMatching(/attachments-.*"AWS::Region"\}\]\]\}$/),
        condition: { StringLike: { 's3:prefix': '*/requests/*/attachments/*' } },
      },
      {
        actions: ['s3:GetObject', 's3:PutObject'],
        resources: expect.stringMatching(/attachments-.*\/\*\/rpa\/\*"\]\]\}$/),
        condition: undefined,
      },
    ]);
    const dataKey = logicalIdOf(synthesized.data.keys.data);
    expect(
      statements.filter((statement) => statement.resources.includes(logicalIdOf(synthesized.data.rpaTokens.secret))),
    ).toEqual([
      {
        actions: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
        resources: expect.any(String),
        condition: undefined,
      },
    ]);
    for (const statement of statements.filter((candidate) => candidate.resources.includes(dataKey))) {
      expect(JSON.stringify(statement.condition)).toMatch(/kms:ViaService.*(dynamodb|s3|secretsmanager)\./);
    }
  });

  it('offers kms:Decrypt on the secrets key only through grantSecretsDecrypt, bound to portal secrets and a clientId', () => {
    const stack = new Stack(new App(), 'FutureRpaWorker');
    const keyArn = 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000000';
    const worker = new Role(stack, 'Worker', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    grantSecretsDecrypt(worker, Key.fromKeyArn(stack, 'SecretsKey', keyArn));
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Allow',
            Action: 'kms:Decrypt',
            Resource: keyArn,
            Condition: {
              StringEquals: { 'kms:EncryptionContext:purpose': 'portal-account-credential' },
              'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['clientId'] },
            },
          },
        ],
      },
    });
  });
});

describe('event functions', () => {
  it('subscribe to ObjectCreated on the attachments bucket with their prefix and suffix', () => {
    const fn = functionNamed(syntheticEvent.name);
    const [notifications] = Object.values(synthesized.apiTemplate.findResources('Custom::S3BucketNotifications'));
    const [subscription] = notifications?.Properties.NotificationConfiguration.LambdaFunctionConfigurations ?? [];
    expect(JSON.stringify(notifications?.Properties.BucketName)).toContain('attachments-');
    expect(subscription).toMatchObject({
      Events: ['s3:ObjectCreated:*'],
      LambdaFunctionArn: { 'Fn::GetAtt': [logicalIdOf(fn.function), 'Arn'] },
    });
    expect(subscription.Filter.Key.FilterRules).toEqual(
      expect.arrayContaining([
        { Name: 'prefix', Value: 'uploads/' },
        { Name: 'suffix', Value: '.pdf' },
      ]),
    );
    synthesized.apiTemplate.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 's3.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [logicalIdOf(fn.function), 'Arn'] },
      SourceAccount: Match.anyValue(),
    });
  });

  it('run asynchronously with a dead-letter queue, and the access of their row', () => {
    const fn = functionNamed(syntheticEvent.name);
    expect(templateOf(fn).toJSON().Resources[logicalIdOf(fn.function)].Properties).toMatchObject({
      Timeout: 300,
      DeadLetterConfig: { TargetArn: { 'Fn::GetAtt': [expect.any(String), 'Arn'] } },
    });
    expect(actionsOf(statementsOf(fn))).toEqual(expectedActions(syntheticEvent.access, 'event'));
    expect(grantsOf(statementsOf(fn), resourceIdsOf(synthesized))).toEqual(
      expectedGrants(syntheticEvent.access, 'event'),
    );
    synthesized.apiTemplate.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
  });
});
