import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { Method } from 'aws-cdk-lib/aws-apigateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceConfigOf } from '#infra/config';
import {
  AUTHORIZER_CACHE_TTL,
  UNAUTHENTICATED_ROUTE_THROTTLES,
  WAF_WINDOW_SECONDS,
  wafRateLimitPerIp,
} from '#infra/constructs/service-api';
import type { ServiceFunction } from '#infra/constructs/service-function';
import { DEFAULT_CLIENT_THROTTLE, DEFAULT_QUOTA_PER_DAY } from '#lib/config/defaults';
import { apiKeyEntity, clientEntity } from '#lib/entities/tenancy';
import { GATEWAY_PROBLEMS, problemBody } from '#lib/http/gateway-responses';
import { dueRechecksDefinition, type RecheckTaskName, type RecheckTaskResources } from '#lib/rechecks/state-machine';
import { authorizerAccess, type InvokedFunctionName, routeAccess } from '#lib/routes/access-model';
import { automationTasks, invokedFunctions, recheckTasks } from '#lib/routes/automation-tasks';
import { automationEventFunctions, eventFunctions, scheduledPayerFunctions } from '#lib/routes/event-functions';
import { functionNameOf, type Route, routes } from '#lib/routes/route-table';
import {
  type AutomationTaskName,
  stateMachineDefinitions,
  type TaskResources,
  TIMEOUTS,
  taskStatesOf,
} from '#lib/runs/state-machines';
import { TABLE_KEY, TTL_ATTRIBUTE, tableIndexes } from '#lib/table';
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

// One synthesis (with real esbuild bundles and both cdk-nag packs) shared by every test of this file.
let synthesized: ReturnType<typeof synthesize>;
beforeAll(() => {
  synthesized = synthesize();
}, 180_000);
afterAll(() => synthesized?.cleanUp());

const functionNamed = (name: string) => synthesized.api.functions[name]!;
/** A function's resource in its stack's template (a route's: its area's nested stack). */
const resourceOfFunction = (fn: ServiceFunction) => templateOf(fn).toJSON().Resources[logicalIdOf(fn.function)];

/** The API stage's method settings: `/*` (every method) and those of single methods. */
const stageMethodSettings = (template: ReturnType<typeof synthesize>['apiTemplate']) => {
  const [stage] = Object.values(template.findResources('AWS::ApiGateway::Stage'));
  return stage!.Properties.MethodSettings as Record<string, unknown>[];
};

describe('synthesis', () => {
  it('passes the AwsSolutions and HIPAA Security packs: every finding is fixed or acknowledged', () => {
    // synthesize() would have thrown; cdk-nag.test.ts proves that the same app fails on an unacknowledged finding.
    const report = JSON.parse(readFileSync(join(synthesized.app.outdir, 'validation-report.json'), 'utf8'));
    expect(report.pluginReports).toEqual([]);
  });
});

describe('functions', () => {
  /** Ours, in the API stack and its areas. */
  const ours = () =>
    synthesized.apiTemplates.flatMap((template) =>
      Object.values(
        template.findResources('AWS::Lambda::Function', {
          Properties: { Description: Match.stringLikeRegexp('^functions/') },
        }),
      ),
    );

  it('has one function per route, the authorizer and one per event function', () => {
    expect(ours()).toHaveLength(routes.length + 1 + eventFunctions.length);
    // Besides ours, only CDK's bucket-notifications handler, when there are event functions.
    const all = synthesized.apiTemplates.flatMap((template) =>
      Object.keys(template.findResources('AWS::Lambda::Function')),
    );
    expect(all).toHaveLength(routes.length + 1 + eventFunctions.length + (eventFunctions.length > 0 ? 1 : 0));
  });

  it('runs every function on nodejs22.x, arm64, traced, without source-map support at start, and its own encrypted log group', () => {
    for (const fn of ours()) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: 1024,
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
      });
      expect(fn.Properties.Environment.Variables.NODE_OPTIONS).toBeUndefined();
    }
    for (const route of routes) {
      expect(resourceOfFunction(functionNamed(functionNameOf(route)))).toMatchObject({
        Properties: { Timeout: 29, Description: `functions/${route.handler}.ts` },
      });
    }
    for (const template of synthesized.apiTemplates) {
      template.allResourcesProperties('AWS::Logs::LogGroup', {
        KmsKeyId: Match.anyValue(),
        RetentionInDays: Match.anyValue(),
      });
    }
  });

  it("ships a route's assets beside its bundle (the OpenAPI document, the reference page's renderer), and only there", () => {
    const shipped = routes.flatMap((route) => {
      const { S3Key } = resourceOfFunction(functionNamed(functionNameOf(route))).Properties.Code;
      const asset = join(synthesized.app.outdir, `asset.${S3Key.replace(/\.zip$/, '')}`);
      expect(existsSync(join(asset, 'index.mjs'))).toBe(true);
      return ['openapi.json', 'api-reference.js']
        .filter((file) => existsSync(join(asset, file)))
        .map((file) => `${route.handler}: ${file}`);
    });
    expect(shipped).toEqual([
      'docs/get-openapi-document: openapi.json',
      'docs/get-api-reference-script: api-reference.js',
    ]);
  });

  it("bundles the environment's credential provider in place of the SDK's default chain (BUNDLING's alias)", () => {
    for (const route of routes) {
      const { S3Key } = resourceOfFunction(functionNamed(functionNameOf(route))).Properties.Code;
      const bundle = readFileSync(
        join(synthesized.app.outdir, `asset.${S3Key.replace(/\.zip$/, '')}`, 'index.mjs'),
        'utf8',
      );
      // Strings survive minification: the chain's debug messages, and the STS client it bundles.
      expect(bundle, route.handler).not.toMatch(/defaultProvider::from(?:SSO|Ini)|AssumeRoleWithWebIdentity/);
      // A route that touches no AWS resource (the schemas, the API's description) bundles no SDK client at all.
      const callsAws = Object.keys(routeAccess[route.handler]).length > 0;
      expect(bundle.includes('deployed bundles read credentials from the environment only'), route.handler).toBe(
        callsAws,
      );
    }
  });

  it('gives event functions a dead-letter queue', () => {
    for (const eventFunction of eventFunctions) {
      expect(resourceOfFunction(functionNamed(eventFunction.name))).toMatchObject({
        Properties: { DeadLetterConfig: { TargetArn: { 'Fn::GetAtt': [expect.any(String), 'Arn'] } } },
      });
    }
  });
});

describe('least privilege', () => {
  const grantsOfFunction = (name: string) => grantsOf(statementsOf(functionNamed(name)), resourceIdsOf(synthesized));

  it("grants each route's function exactly what its declared access implies, action by action and resource by resource", () => {
    for (const route of routes) {
      const name = functionNameOf(route);
      expect({ route: route.handler, grants: grantsOfFunction(name) }).toEqual({
        route: route.handler,
        grants: expectedGrants(routeAccess[route.handler], 'api'),
      });
      expect(actionsOf(statementsOf(functionNamed(name)))).toEqual(expectedActions(routeAccess[route.handler]));
    }
  });

  it("lets the authorizer get and update API-key items, and read clients' usageIdentifierKey alone", () => {
    const usageKeyRead = `dynamodb:GetItem on table if ${JSON.stringify({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] },
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['usageIdentifierKey'] },
      StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
    })}`;
    expect(grantsOfFunction('Authorizer')).toEqual([...expectedGrants(authorizerAccess), usageKeyRead].sort());
    expect(grantsOfFunction('Authorizer').filter((grant) => grant.startsWith('dynamodb:'))).toEqual([
      'dynamodb:GetItem on table if dynamodb:LeadingKeys APIKEY#*',
      usageKeyRead,
      'dynamodb:UpdateItem on table if dynamodb:LeadingKeys APIKEY#*',
    ]);
    // The pattern is the partition key of API-key items, and of no other entity.
    expect(apiKeyEntity.key({ keyHash: 'hash' }).pk).toBe('APIKEY#hash');
    expect(clientEntity.key({ clientId: 'APIKEY' }).pk).not.toMatch(/^APIKEY#/);
  });

  it("holds every worker, recorder and task to the partitions of its own items, action by action (the template's LeadingKeys)", () => {
    const functionOf = (name: string) =>
      synthesized.api.functions[name] ??
      synthesized.automation.functions[name as AutomationTaskName] ??
      synthesized.automation.eventFunctions[name]?.fn ??
      synthesized.automation.invokeTargets[name as InvokedFunctionName]?.fn ??
      synthesized.automation.scheduledFunctions[name] ??
      synthesized.automation.dueRechecks.functions[name as RecheckTaskName]!;
    /** The function's grants on the table's items, each action with the partitions its condition names. */
    const onItems = (name: string) =>
      grantsOf(statementsOf(functionOf(name)), resourceIdsOf(synthesized))
        .filter((grant) => grant.startsWith('dynamodb:') && grant.includes(' on table'))
        .map((grant) =>
          grant.replace(' on table if dynamodb:LeadingKeys ', ' ').replace(/ on table if \{.*/, ' settings'),
        );
    // Written out here, pattern by pattern: what each function's code reaches (docs/security.md).
    const [REQ, BATCH, PACC, PCONN, EVENT, FLIGHTS, PAYER, PASSUB] = [
      'CLIENT#*#REQ#*',
      'CLIENT#*#RPABATCH#*',
      'CLIENT#*#PACC#*',
      'CLIENT#*#PCONN#*',
      'CLIENT#*#EVENT#*',
      'CLIENT#*#AUTOMATION#INFLIGHT',
      'PAYER#*',
      'PASSUB#*',
    ];
    const expected: Record<string, string[]> = {
      FillPortalForm: [
        `dynamodb:DeleteItem ${FLIGHTS},${PACC}`,
        `dynamodb:GetItem ${FLIGHTS},${PACC},${REQ}`,
        `dynamodb:PutItem ${EVENT},${PACC},${REQ}`,
        `dynamodb:UpdateItem ${FLIGHTS},${PACC}`,
      ],
      CheckPortalStatus: [
        `dynamodb:BatchGetItem ${REQ}`,
        `dynamodb:DeleteItem ${PACC},${REQ}`,
        `dynamodb:GetItem ${PACC},${REQ}`,
        'dynamodb:GetItem settings',
        `dynamodb:PutItem ${EVENT},${PACC},${REQ}`,
        `dynamodb:UpdateItem ${PACC},${REQ}`,
      ],
      RecordRunFailure: [
        `dynamodb:DeleteItem ${FLIGHTS}`,
        `dynamodb:GetItem ${FLIGHTS},${REQ}`,
        `dynamodb:PutItem ${EVENT},${REQ}`,
        `dynamodb:UpdateItem ${FLIGHTS}`,
      ],
      FinishBatch: [
        `dynamodb:BatchGetItem ${REQ}`,
        `dynamodb:DeleteItem ${FLIGHTS}`,
        `dynamodb:GetItem ${FLIGHTS},${REQ},${BATCH}`,
        `dynamodb:PutItem ${EVENT},${REQ},${BATCH}`,
        `dynamodb:UpdateItem ${FLIGHTS}`,
      ],
      RecordExecutionEnded: [
        `dynamodb:BatchGetItem ${REQ}`,
        `dynamodb:GetItem ${REQ},${BATCH}`,
        `dynamodb:PutItem ${EVENT},${REQ},${BATCH}`,
      ],
      SubmitPasClaim: [
        `dynamodb:DeleteItem ${FLIGHTS},${REQ}`,
        `dynamodb:GetItem ${FLIGHTS},${PCONN},${REQ},${PASSUB},${PAYER}`,
        'dynamodb:GetItem settings',
        `dynamodb:PutItem ${EVENT},${PCONN},${REQ},${PASSUB}`,
        `dynamodb:Query ${REQ}`,
        `dynamodb:UpdateItem ${FLIGHTS},${REQ}`,
      ],
      CheckPayerStatus: [
        `dynamodb:BatchGetItem ${REQ}`,
        `dynamodb:DeleteItem ${REQ}`,
        `dynamodb:GetItem ${PCONN},${REQ},${PASSUB},${PAYER}`,
        'dynamodb:GetItem settings',
        `dynamodb:PutItem ${EVENT},${PCONN},${REQ},${PASSUB}`,
        `dynamodb:Query ${REQ}`,
        `dynamodb:UpdateItem ${REQ}`,
      ],
      IssueRunCredentials: [`dynamodb:GetItem ${PACC},${REQ}`, `dynamodb:PutItem ${REQ}`],
      // Its client's key set is in the client's own partition: CLIENT#* is every client partition (reads only).
      IssuePayerToken: [`dynamodb:GetItem CLIENT#*,${PCONN},${PAYER}`, `dynamodb:PutItem ${PCONN}`],
      // The subscriptions (our ids), the connections' pointers to them; no request, no client's own partition.
      KeepPayerSubscriptions: [`dynamodb:GetItem ${PCONN},${PASSUB},${PAYER}`, `dynamodb:PutItem ${PCONN},${PASSUB}`],
      SelectDueRechecks: [
        'dynamodb:GetItem CLIENT#*',
        `dynamodb:DeleteItem ${REQ}`,
        `dynamodb:PutItem ${EVENT},${REQ}`,
      ].sort(),
      StartRecheckBatch: [
        `dynamodb:BatchGetItem ${PACC}`,
        `dynamodb:DeleteItem ${FLIGHTS}`,
        `dynamodb:GetItem CLIENT#*,${PAYER}`,
        `dynamodb:PutItem ${FLIGHTS},${REQ},${BATCH}`,
        `dynamodb:Query ${FLIGHTS}`,
        'dynamodb:UpdateItem CLIENT#*',
      ],
      // Public: its subscription, then a re-check's batch start (StartRecheckBatch's partitions).
      ReceivePayerNotification: [
        `dynamodb:BatchGetItem ${PACC}`,
        `dynamodb:DeleteItem ${FLIGHTS}`,
        `dynamodb:GetItem CLIENT#*,PASSUB#*,${PAYER}`,
        `dynamodb:PutItem ${FLIGHTS},${REQ},${BATCH},PASSUB#*`,
        `dynamodb:Query ${FLIGHTS}`,
        'dynamodb:UpdateItem CLIENT#*',
      ],
      VerifyUploadedAttachment: [
        `dynamodb:DeleteItem ${REQ}`,
        `dynamodb:GetItem ${REQ}`,
        `dynamodb:PutItem ${REQ}`,
        'dynamodb:UpdateItem CLIENT#*',
      ],
    };
    expect(Object.fromEntries(Object.keys(expected).map((name) => [name, onItems(name)]))).toEqual(expected);
    // The browser workers above all: none of their writes reaches the client's own partition (its users,
    // webhooks, counters) or a partition of another kind than runs, requests, portal accounts, events, flights.
    for (const worker of automationTasks.filter((task) => task.worker === 'browser')) {
      const written = onItems(worker.name)
        .filter((grant) => /^dynamodb:(PutItem|UpdateItem|DeleteItem) /.test(grant))
        .flatMap((grant) => grant.split(' ')[1]!.split(','));
      expect(written.filter((partition) => ![REQ, PACC, EVENT, FLIGHTS].includes(partition))).toEqual([]);
    }
  });

  it('grants each event function exactly its declared access plus its dead-letter queue', () => {
    for (const eventFunction of eventFunctions) {
      expect(grantsOfFunction(eventFunction.name)).toEqual(expectedGrants(eventFunction.access, 'event'));
    }
  });

  it('grants no function a DynamoDB action its row does not list: batches, deletes and the index where used only', () => {
    const rows = [
      ...routes.map((route) => ({ name: functionNameOf(route), access: routeAccess[route.handler] })),
      ...eventFunctions.map(({ name, access }) => ({ name, access })),
    ];
    const holding = (grant: string) => rows.filter(({ name }) => grantsOfFunction(name).includes(grant));
    expect(holding('dynamodb:BatchWriteItem on table')).toEqual([]);
    expect(
      holding('dynamodb:BatchGetItem on table')
        .map(({ name }) => name)
        .sort(),
    ).toEqual([
      'FilterPortalAccounts',
      'FilterPortalAccountsV1',
      'GetCheckAuthStatus',
      // A start chooses each run's account: a payer's accounts are read by their index entries' keys.
      'StartCheckAuthStatus',
      'StartViewOnPage',
      'SubmitRequest',
    ]);
    const queryingIndex = (index: string) =>
      holding(`dynamodb:Query on index ${index}`)
        .map(({ name }) => name)
        .sort();
    // The scraper session reads its token's API key by id (access pattern 2), the JWKS route a key set by its
    // public id, the connections' list its page.
    expect(queryingIndex('gsi1')).toEqual([
      'FilterPortalAccounts',
      'FilterPortalAccountsV1',
      'GetPayerJwks',
      'GetScraperSession',
      'ListPayerConnections',
      'ListPortalAccounts',
      'ListPortalAccountsV1',
    ]);
    // The starts choose a run's account by payer (gsi2) or as the organization's only active one (gsi3); a
    // submission or a cancel (and a batch, and a payer's notification) the organization's active connection to
    // the payer (gsi2).
    const choosing = ['ReceivePayerNotification', 'StartCheckAuthStatus', 'StartViewOnPage'];
    for (const index of ['gsi2', 'gsi3', 'gsi4']) {
      const submitting = index === 'gsi2' ? ['CancelRequest', 'SubmitRequest'] : [];
      expect(queryingIndex(index), index).toEqual(
        ['FilterPortalAccounts', 'FilterPortalAccountsV1', ...(index === 'gsi4' ? [] : choosing), ...submitting].sort(),
      );
    }
    for (const { name, access } of rows) {
      const writes = access.table?.actions.some((action) => ['PutItem', 'UpdateItem', 'DeleteItem'].includes(action));
      expect({ name, encrypts: grantsOfFunction(name).includes('kms:Encrypt on dataKey via dynamodb') }).toEqual({
        name,
        encrypts: Boolean(writes),
      });
    }
  });

  it('keeps each role to X-Ray alone on *, in a policy of its own: the only place cdk-nag lets * pass', () => {
    const roles = [
      ...['Authorizer', ...routes.map(functionNameOf), ...eventFunctions.map((fn) => fn.name)].map(
        (name) => [templateOf(functionNamed(name)), functionNamed(name)] as const,
      ),
      ...automationTasks.map(
        (task) => [synthesized.automationTemplate, synthesized.automation.functions[task.name]!] as const,
      ),
      ...invokedFunctions.map(
        (invoked) => [synthesized.automationTemplate, synthesized.automation.invokeTargets[invoked.name]!.fn] as const,
      ),
    ];
    for (const [template, fn] of roles) {
      const unscoped = template.toJSON().Resources[logicalIdOf(fn.role.unscopedPolicy!)];
      expect(unscoped.Properties.PolicyDocument.Statement).toEqual([
        { Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Effect: 'Allow', Resource: '*' },
      ]);
      const scoped = template.toJSON().Resources[logicalIdOf(fn.role.policy)];
      for (const statement of scoped.Properties.PolicyDocument.Statement) expect(statement.Resource).not.toBe('*');
    }
  });

  it('lets only functions of secrets routes use the secrets key, to encrypt, with clientId in the context', () => {
    const secretsKey = logicalIdOf(synthesized.data.keys.secrets);
    const named = [
      { name: 'Authorizer', secrets: false },
      ...routes.map((route) => ({
        name: functionNameOf(route),
        secrets: routeAccess[route.handler].secrets === 'encrypt',
      })),
      ...eventFunctions.map((fn) => ({ name: fn.name, secrets: fn.access.secrets === 'encrypt' })),
    ];
    for (const { name, secrets } of named) {
      const onSecretsKey = statementsOf(functionNamed(name)).filter((statement) =>
        statement.resources.includes(secretsKey),
      );
      if (!secrets) {
        expect({ name, onSecretsKey }).toEqual({ name, onSecretsKey: [] });
        continue;
      }
      expect(onSecretsKey).toEqual([
        {
          actions: ['kms:GenerateDataKey'],
          resources: expect.any(String),
          condition: { 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['clientId'] } },
        },
      ]);
      expect(resourceOfFunction(functionNamed(name)).Properties.Environment.Variables.SECRETS_KEY_ID).toBeDefined();
    }
  });

  it('lets only the paged lists (portal accounts, authorization history) read the cursor signing secret', () => {
    const secret = logicalIdOf(synthesized.data.cursorSigning.secret);
    const readers = ['Authorizer', ...routes.map(functionNameOf), ...eventFunctions.map((fn) => fn.name)].filter(
      (name) => statementsOf(functionNamed(name)).some((statement) => statement.resources.includes(secret)),
    );
    expect(readers.sort()).toEqual(
      [
        'ListPortalAccounts',
        'ListPortalAccountsV1',
        'FilterPortalAccounts',
        'FilterPortalAccountsV1',
        'GetAuthorizationHistory',
        'ListPayerConnections',
      ].sort(),
    );
    const [stored] = Object.values(synthesized.dataTemplate.findResources('AWS::SecretsManager::Secret'));
    expect(stored?.Properties.KmsKeyId).toBeDefined();
    expect(stored?.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
  });

  it('lets only the functions that sign and verify scraper tokens read the RPA token secret', () => {
    const secret = logicalIdOf(synthesized.data.rpaTokens.secret);
    const readers = ['Authorizer', ...routes.map(functionNameOf), ...eventFunctions.map((fn) => fn.name)].filter(
      (name) => statementsOf(functionNamed(name)).some((statement) => statement.resources.includes(secret)),
    );
    expect(readers.sort()).toEqual(['GetScraperSession', 'IssueRpaAccessToken']);
    expect(secret).not.toBe(logicalIdOf(synthesized.data.cursorSigning.secret));
  });

  it('lets only the idempotent routes read the idempotency fingerprint secret', () => {
    const secret = logicalIdOf(synthesized.data.requestFingerprints.secret);
    const readers = ['Authorizer', ...routes.map(functionNameOf), ...eventFunctions.map((fn) => fn.name)].filter(
      (name) => statementsOf(functionNamed(name)).some((statement) => statement.resources.includes(secret)),
    );
    expect(readers.sort()).toEqual(
      [
        'CancelRequest',
        'CreateAttachment',
        'CreatePayerConnection',
        'CreatePortalAccount',
        'CreatePortalAccountV1',
        'CreateRequest',
        'StartCheckAuthStatus',
        'StartViewOnPage',
        'SubmitRequest',
      ].sort(),
    );
    const others = [synthesized.data.cursorSigning.secret, synthesized.data.rpaTokens.secret].map(logicalIdOf);
    expect(others).not.toContain(secret);
  });

  it('grants kms:Decrypt on the secrets key to the run credentials function (portal secrets) and the webhook deliverers (signing secrets) only, each its own purpose', () => {
    const secretsKey = logicalIdOf(synthesized.data.keys.secrets);
    const decrypting: Record<string, unknown> = {};
    const templates = [
      ...synthesized.apiTemplates,
      synthesized.dataTemplate,
      synthesized.automationTemplate,
      synthesized.eventsTemplate,
      synthesized.auditTemplate,
      synthesized.monitoringTemplate,
    ];
    for (const template of templates) {
      const policies = template.findResources('AWS::IAM::ManagedPolicy');
      Object.assign(policies, template.findResources('AWS::IAM::Policy'));
      for (const [id, policy] of Object.entries(policies)) {
        for (const statement of policy.Properties.PolicyDocument.Statement) {
          if (!JSON.stringify(statement.Resource).includes(secretsKey)) continue;
          if (![statement.Action].flat().includes('kms:Decrypt')) continue;
          expect([statement.Action].flat(), id).toEqual(['kms:Decrypt']);
          decrypting[id] = statement.Condition;
        }
      }
    }
    expect(automationTasks.filter((task) => task.access.secrets === 'decrypt')).toEqual([]);
    const readers = invokedFunctions.filter((fn) => fn.access.secrets === 'decrypt').map((fn) => fn.name);
    expect(readers).toEqual(['IssueRunCredentials']);
    const clientId = { 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['clientId'] } };
    const { events } = synthesized;
    expect(decrypting).toEqual({
      [logicalIdOf(synthesized.automation.invokeTargets.IssueRunCredentials!.fn.role.policy)]: {
        StringEquals: { 'kms:EncryptionContext:purpose': 'portal-account-credential' },
        ...clientId,
      },
      ...Object.fromEntries(
        ['DeliverWebhookEvents', 'DeliverDueWebhooks'].map((name) => [
          logicalIdOf(events.functions[name]!.role.policy),
          { StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-signing-secret' }, ...clientId },
        ]),
      ),
    });
  });

  it('grants kms:Sign (our client assertions to payers) to the payer token function alone, on tagged keys only', () => {
    const signing: Record<string, unknown> = {};
    const templates = [
      ...synthesized.apiTemplates,
      synthesized.dataTemplate,
      synthesized.automationTemplate,
      synthesized.eventsTemplate,
      synthesized.auditTemplate,
      synthesized.monitoringTemplate,
    ];
    for (const template of templates) {
      const policies = template.findResources('AWS::IAM::ManagedPolicy');
      Object.assign(policies, template.findResources('AWS::IAM::Policy'));
      for (const [id, policy] of Object.entries(policies)) {
        for (const statement of policy.Properties.PolicyDocument.Statement) {
          const actions = [statement.Action].flat() as string[];
          if (actions.some((action) => action === 'kms:Sign' || action === 'kms:*')) signing[id] = statement.Condition;
        }
      }
    }
    expect(automationTasks.filter((task) => task.access.payerAssertions)).toEqual([]);
    expect(invokedFunctions.filter((fn) => fn.access.payerAssertions).map((fn) => fn.name)).toEqual([
      'IssuePayerToken',
    ]);
    const tokenFunction = synthesized.automation.invokeTargets.IssuePayerToken!.fn;
    expect(Object.keys(signing)).toEqual([logicalIdOf(tokenFunction.role.policy)]);
    expect(Object.values(signing)[0]).toMatchObject({
      StringEquals: { 'kms:SigningAlgorithm': 'RSASSA_PKCS1_V1_5_SHA_384', 'kms:MessageType': 'RAW' },
    });
  });

  it("lets the secrets key's own policy deny decryption to every principal but its named readers' roles", () => {
    const [key] = Object.values(
      synthesized.dataTemplate.findResources('AWS::KMS::Key', {
        Properties: { Description: Match.stringLikeRegexp('portal-account secrets') },
      }),
    );
    const statements = key?.Properties.KeyPolicy.Statement as Array<Record<string, any>>;
    const bySid = Object.fromEntries(statements.map((statement) => [statement.Sid, statement]));
    expect(Object.keys(bySid).sort()).toEqual([
      'DecryptOnlyByNamedReaders',
      'KeyAdministrationThroughIam',
      'KeyUseThroughIam',
    ]);
    const roleNames = [
      synthesized.automationTemplate.toJSON().Resources[
        logicalIdOf(synthesized.automation.invokeTargets.IssueRunCredentials!.fn.role)
      ].Properties.RoleName,
      ...['DeliverWebhookEvents', 'DeliverDueWebhooks'].map(
        (name) =>
          synthesized.eventsTemplate.toJSON().Resources[logicalIdOf(synthesized.events.functions[name]!.role)]
            .Properties.RoleName,
      ),
    ].sort();
    expect(roleNames).toEqual([
      'ServiceReviewAutomation-IssueRunCredentials',
      'ServiceReviewEvents-DeliverDueWebhooks',
      'ServiceReviewEvents-DeliverWebhookEvents',
    ]);
    // The browser workers' roles have generated names: the key policy cannot name them.
    for (const task of automationTasks) {
      const role =
        synthesized.automationTemplate.toJSON().Resources[
          logicalIdOf(synthesized.automation.functions[task.name]!.role)
        ];
      expect(role.Properties.RoleName, task.name).toBeUndefined();
    }
    const deny = bySid.DecryptOnlyByNamedReaders!;
    expect(deny).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Action: 'kms:Decrypt', Resource: '*' });
    const exempt = (deny.Condition.ArnNotEquals['aws:PrincipalArn'] as Array<{ 'Fn::Join': [string, unknown[]] }>)
      .map((arn) => JSON.stringify(arn))
      .sort();
    expect(exempt).toHaveLength(roleNames.length);
    for (const [i, roleName] of roleNames.entries()) expect(exempt[i]).toContain(`:role/${roleName}"`);
    // Administrators manage the key without using it; use is delegated to IAM, which grants it per role.
    const administration = [bySid.KeyAdministrationThroughIam!.Action].flat() as string[];
    expect(administration.filter((action) => /Decrypt|Encrypt|GenerateDataKey|CreateGrant|\*/.test(action))).toEqual(
      [],
    );
    expect(administration).not.toContain('kms:CreateGrant');
    expect([bySid.KeyUseThroughIam!.Action].flat().sort()).toEqual(
      ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'].sort(),
    );
    for (const sid of ['KeyAdministrationThroughIam', 'KeyUseThroughIam']) {
      expect(bySid[sid]).toMatchObject({ Effect: 'Allow', Principal: { AWS: expect.anything() } });
      expect(JSON.stringify(bySid[sid].Principal)).toContain(':root');
    }
  });
});

describe('automation', () => {
  const taskFunction = (name: AutomationTaskName) => synthesized.automation.functions[name]!;
  const invokedFunction = (name: InvokedFunctionName) => synthesized.automation.invokeTargets[name]!.fn;
  const resourceOf = (construct: { node: { defaultChild?: unknown } }) =>
    synthesized.automationTemplate.toJSON().Resources[logicalIdOf(construct)];
  /** A definition as deployed: the Fn::Join of the template, each function ARN as `arn:<logical id>`. */
  const deployedDefinition = (definitionString: { 'Fn::Join': [string, unknown[]] }) =>
    JSON.parse(
      definitionString['Fn::Join'][1]
        .map((part) =>
          typeof part === 'string' ? part : `arn:${(part as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]}`,
        )
        .join(''),
    );

  it('has one function per automation task with exactly its access; browser workers sized for Chromium, on x86_64', () => {
    synthesized.automationTemplate.resourceCountIs(
      'AWS::Lambda::Function',
      automationTasks.length +
        automationEventFunctions.length +
        invokedFunctions.length +
        recheckTasks.length +
        scheduledPayerFunctions.length,
    );
    for (const task of automationTasks) {
      const fn = taskFunction(task.name);
      expect({
        task: task.name,
        grants: grantsOf(statementsOf(fn), resourceIdsOf(synthesized)),
      }).toEqual({ task: task.name, grants: expectedGrants(task.access, 'task') });
      expect(resourceOf(fn.function).Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Description: `functions/${task.handler}.ts`,
        TracingConfig: { Mode: 'Active' },
        ...{
          browser: { Architectures: ['x86_64'], MemorySize: 2048, Timeout: 150 },
          payer: { Architectures: ['arm64'], MemorySize: 512, Timeout: TIMEOUTS.payerTask + 15 },
          recorder: { Architectures: ['arm64'], MemorySize: 1024, Timeout: 30 },
        }[task.worker],
      });
    }
  });

  it('keeps the PAS subscriptions every 5 minutes: KeepPayerSubscriptions, its access, the token function to invoke', () => {
    const fn = synthesized.automation.scheduledFunctions.KeepPayerSubscriptions!;
    const row = scheduledPayerFunctions.find((candidate) => candidate.name === 'KeepPayerSubscriptions')!;
    expect(grantsOf(statementsOf(fn), resourceIdsOf(synthesized))).toEqual(expectedGrants(row.access, 'event'));
    const schedule = synthesized.automation.node.findChild('KeepPayerSubscriptionsSchedule');
    const functionArn = { 'Fn::GetAtt': [logicalIdOf(fn.function), 'Arn'] };
    expect(resourceOf(schedule).Properties).toMatchObject({
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [{ Arn: functionArn, RetryPolicy: { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 0 } }],
    });
    const variables = resourceOf(fn.function).Properties.Environment.Variables;
    expect(variables).toMatchObject({ PAYER_TOKEN_FUNCTION_NAME: expect.anything() });
    // No public base URL in the context: no subscription is made, and nothing tells the functions one.
    expect(variables.PUBLIC_API_BASE_URL).toBeUndefined();
    expect(resourceOf(fn.function).Properties).toMatchObject({ Timeout: 240, MemorySize: 512 });
  });

  it('tells the payer functions the public base URL of CDK context publicApiBaseUrl, and refuses one not https', () => {
    const context = { 'aws:cdk:bundling-stacks': [], publicApiBaseUrl: 'https://api.example.org' };
    const withUrl = synthesize({ context });
    try {
      const payerFunctions = [
        withUrl.automation.scheduledFunctions.KeepPayerSubscriptions!,
        withUrl.automation.functions.SubmitPasClaim!,
        withUrl.automation.functions.CheckPayerStatus!,
      ];
      const variablesOf = (fn: ServiceFunction) =>
        withUrl.automationTemplate.toJSON().Resources[logicalIdOf(fn.function)].Properties.Environment.Variables;
      for (const fn of payerFunctions) expect(variablesOf(fn).PUBLIC_API_BASE_URL).toBe('https://api.example.org');
      expect(variablesOf(withUrl.automation.functions.FillPortalForm!)).not.toHaveProperty('PUBLIC_API_BASE_URL');
    } finally {
      withUrl.cleanUp();
    }
    const app = new App({ context: { publicApiBaseUrl: 'http://api.example.org' } });
    expect(() => serviceConfigOf(app)).toThrow(/publicApiBaseUrl/);
  });

  it('reserves concurrency for each browser worker (infra/config.ts browserConcurrency, 10), and for nothing else', () => {
    expect(synthesized.config.browserConcurrency).toBe(10);
    for (const task of automationTasks) {
      expect({
        task: task.name,
        reserved: resourceOf(taskFunction(task.name).function).Properties.ReservedConcurrentExecutions,
      }).toEqual({
        task: task.name,
        reserved: task.worker === 'browser' ? 10 : undefined,
      });
    }
    const reserving = synthesized.apiTemplates
      .flatMap((template) => Object.entries(template.findResources('AWS::Lambda::Function')))
      .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined);
    expect(reserving).toEqual([]);
  });

  it('records executions that ended TIMED_OUT, ABORTED or FAILED: a rule on the two state machines, to RecordExecutionEnded', () => {
    expect(automationEventFunctions.map((fn) => fn.name)).toEqual(['RecordExecutionEnded']);
    const { fn, trigger } = synthesized.automation.eventFunctions.RecordExecutionEnded!;
    const machineRefs = (['viewOnPage', 'checkAuthStatus', 'submitToPayer'] as const).map((key) => ({
      Ref: logicalIdOf(synthesized.automation.stateMachines[key]!.stateMachine),
    }));
    const functionArn = { 'Fn::GetAtt': [logicalIdOf(fn.function), 'Arn'] };
    const deadLetters = { 'Fn::GetAtt': [logicalIdOf(fn.deadLetterQueue!), 'Arn'] };
    expect(resourceOf(trigger.rule).Properties).toMatchObject({
      State: 'ENABLED',
      EventPattern: {
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { status: ['TIMED_OUT', 'ABORTED', 'FAILED'], stateMachineArn: machineRefs },
      },
      Targets: [{ Arn: functionArn, DeadLetterConfig: { Arn: deadLetters }, Id: expect.any(String) }],
    });
    const keeperSchedule = synthesized.automation.node.findChild('KeepPayerSubscriptionsSchedule');
    expect(Object.keys(synthesized.automationTemplate.findResources('AWS::Events::Rule')).sort()).toEqual(
      [logicalIdOf(trigger.rule), logicalIdOf(keeperSchedule)].sort(),
    );
    // EventBridge may invoke it for this rule only, and send what it cannot deliver to its dead letters.
    const permissions = Object.values(
      synthesized.automationTemplate.findResources('AWS::Lambda::Permission', {
        Properties: { FunctionName: functionArn },
      }),
    );
    expect(permissions.map((permission) => permission.Properties)).toEqual([
      {
        Action: 'lambda:InvokeFunction',
        FunctionName: functionArn,
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [logicalIdOf(trigger.rule), 'Arn'] },
      },
    ]);
    synthesized.automationTemplate.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: logicalIdOf(fn.deadLetterQueue!) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'sqs:SendMessage',
            Principal: { Service: 'events.amazonaws.com' },
            Condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [logicalIdOf(trigger.rule), 'Arn'] } } },
          }),
        ]),
      },
    });
    // A recorder: the run store's calls only, no Step Functions permission; told which machine is which.
    expect(grantsOf(statementsOf(fn), resourceIdsOf(synthesized))).toEqual(
      expectedGrants(automationEventFunctions[0]!.access, 'event'),
    );
    expect(resourceOf(fn.function).Properties).toMatchObject({
      Description: 'functions/rpa/record-execution-ended.ts',
      Architectures: ['arm64'],
      Timeout: 30,
      DeadLetterConfig: { TargetArn: deadLetters },
      Environment: {
        Variables: {
          VIEW_ON_PAGE_STATE_MACHINE_ARN: machineRefs[0],
          CHECK_AUTH_STATUS_STATE_MACHINE_ARN: machineRefs[1],
          SUBMIT_TO_PAYER_STATE_MACHINE_ARN: machineRefs[2],
        },
      },
    });
  });

  it('has the invoked functions (run credentials, payer tokens): exactly their access, small, on arm64', () => {
    for (const invoked of invokedFunctions) {
      const fn = invokedFunction(invoked.name);
      expect({
        name: invoked.name,
        grants: grantsOf(statementsOf(fn), resourceIdsOf(synthesized)),
      }).toEqual({ name: invoked.name, grants: expectedGrants(invoked.access, 'invoked') });
      expect(resourceOf(fn.function).Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Description: `functions/${invoked.handler}.ts`,
        Architectures: ['arm64'],
        MemorySize: 1024,
        Timeout: invoked.timeoutSeconds,
        TracingConfig: { Mode: 'Active' },
        // The run credentials function opens portal secrets; the payer token function signs with KMS keys it looks up.
        ...(invoked.access.secrets ? { Environment: { Variables: { SECRETS_KEY_ID: expect.anything() } } } : {}),
      });
    }
  });

  it('splits the secrets from the browser: workers invoke the credentials function alone, which alone decrypts', () => {
    const credentials = invokedFunction('IssueRunCredentials');
    const credentialsArn = { 'Fn::GetAtt': [logicalIdOf(credentials.function), 'Arn'] };
    const secretsKey = logicalIdOf(synthesized.data.keys.secrets);
    const browserWorkers = automationTasks.filter((task) => task.worker === 'browser');
    expect(browserWorkers.map((task) => task.name).sort()).toEqual(['CheckPortalStatus', 'FillPortalForm']);
    for (const task of browserWorkers) {
      const fn = taskFunction(task.name);
      const statements = statementsOf(fn);
      const actions = statements.flatMap((statement) => statement.actions);
      // No decryption of anything but the data key through DynamoDB or S3, and no secret of Secrets Manager.
      expect(
        actions.filter((action) => action.startsWith('secretsmanager:')),
        task.name,
      ).toEqual([]);
      expect(
        statements.filter((statement) => statement.resources.includes(secretsKey)),
        task.name,
      ).toEqual([]);
      for (const statement of statements.filter((candidate) => candidate.actions.includes('kms:Decrypt'))) {
        expect(JSON.stringify(statement.condition), task.name).toMatch(/kms:ViaService.*(dynamodb|s3)\./);
      }
      // It may invoke one function: the credentials function, by its ARN alone (no version, no alias, no *).
      const invoking = statements.filter((statement) =>
        statement.actions.some((action) => action.startsWith('lambda:')),
      );
      expect(invoking, task.name).toEqual([
        { actions: ['lambda:InvokeFunction'], resources: JSON.stringify(credentialsArn), condition: undefined },
      ]);
      const variables = resourceOf(fn.function).Properties.Environment.Variables;
      expect(variables.RUN_CREDENTIALS_FUNCTION_NAME, task.name).toEqual({ Ref: logicalIdOf(credentials.function) });
      expect(variables.SECRETS_KEY_ID, task.name).toBeUndefined();
    }
    // Nobody else may invoke it: not the routes, the recorders, or the credentials function itself.
    const invokers: string[] = [];
    for (const template of [...synthesized.apiTemplates, synthesized.dataTemplate, synthesized.automationTemplate]) {
      for (const [id, policy] of Object.entries(template.findResources('AWS::IAM::ManagedPolicy'))) {
        for (const statement of policy.Properties.PolicyDocument.Statement) {
          if (JSON.stringify(statement.Resource).includes(logicalIdOf(credentials.function))) invokers.push(id);
        }
      }
    }
    expect(invokers.sort()).toEqual(
      browserWorkers.map((task) => logicalIdOf(taskFunction(task.name).role.policy)).sort(),
    );
    // And the credentials function's role decrypts with the secrets key portal secrets alone, bound to the tenant's clientId.
    expect(statementsOf(credentials).filter((statement) => statement.resources.includes(secretsKey))).toEqual([
      {
        actions: ['kms:Decrypt'],
        resources: expect.stringContaining(secretsKey),
        condition: {
          StringEquals: { 'kms:EncryptionContext:purpose': 'portal-account-credential' },
          'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['clientId'] },
        },
      },
    ]);
  });

  it("ships Chromium and playwright-core installed beside the browser workers' bundles only", () => {
    for (const task of automationTasks) {
      const { S3Key } = resourceOf(taskFunction(task.name).function).Properties.Code;
      const asset = join(synthesized.app.outdir, `asset.${S3Key.replace(/\.zip$/, '')}`);
      expect(existsSync(join(asset, 'index.mjs'))).toBe(true);
      const installed = [
        'node_modules/@sparticuz/chromium/bin/chromium.br',
        'node_modules/@sparticuz/chromium/build/index.js',
        'node_modules/tar-fs/package.json',
        'node_modules/playwright-core/package.json',
      ].map((file) => existsSync(join(asset, file)));
      expect({ task: task.name, installed }).toEqual({
        task: task.name,
        installed: installed.map(() => task.worker === 'browser'),
      });
    }
    for (const invoked of invokedFunctions) {
      const { S3Key } = resourceOf(invokedFunction(invoked.name).function).Properties.Code;
      const asset = join(synthesized.app.outdir, `asset.${S3Key.replace(/\.zip$/, '')}`);
      expect(existsSync(join(asset, 'index.mjs'))).toBe(true);
      expect(existsSync(join(asset, 'node_modules')), invoked.name).toBe(false);
    }
  });

  it('runs the definitions of lib/runs/state-machines.ts, each Task bound to its function, logged and traced', () => {
    const resources = Object.fromEntries(
      automationTasks.map((task) => [task.name, `arn:${logicalIdOf(taskFunction(task.name).function)}`]),
    ) as TaskResources;
    for (const key of ['viewOnPage', 'checkAuthStatus'] as const) {
      const machine = synthesized.automation.stateMachines[key]!;
      const { Properties } = resourceOf(machine.stateMachine);
      const definition = deployedDefinition(Properties.DefinitionString);
      expect(definition).toEqual(JSON.parse(JSON.stringify(stateMachineDefinitions[key](resources))));
      expect(definition.TimeoutSeconds).toBe(key === 'viewOnPage' ? 300 : 900);
      expect(Properties).toMatchObject({
        StateMachineName: synthesized.automation.stateMachineNames[key],
        StateMachineType: 'STANDARD',
        TracingConfiguration: { Enabled: true },
        LoggingConfiguration: {
          Level: 'ALL',
          IncludeExecutionData: false,
          Destinations: [
            { CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [logicalIdOf(machine.logGroup), 'Arn'] } } },
          ],
        },
      });
      expect(resourceOf(machine.logGroup).Properties).toMatchObject({
        KmsKeyId: { 'Fn::GetStackOutput': expect.objectContaining({ StackName: synthesized.data.stackName }) },
        RetentionInDays: 365,
      });
      expect(JSON.stringify(resourceOf(machine.logGroup).Properties.KmsKeyId)).toContain(
        logicalIdOf(synthesized.data.keys.data),
      );
    }
  });

  it('lets each state machine invoke exactly the functions of its Tasks, and nothing else but logs and traces', () => {
    for (const key of ['viewOnPage', 'checkAuthStatus'] as const) {
      const machine = synthesized.automation.stateMachines[key]!;
      const tasks = Object.keys(taskStatesOf(stateMachineDefinitions[key]({} as TaskResources)));
      const [invoke, ...others] = [machine.role.policy, machine.role.unscopedPolicy!].flatMap(
        (policy) => resourceOf(policy).Properties.PolicyDocument.Statement,
      );
      expect(invoke).toEqual({
        Action: 'lambda:InvokeFunction',
        Effect: 'Allow',
        Resource: expect.arrayContaining(
          tasks.map((name) => ({
            'Fn::GetAtt': [logicalIdOf(taskFunction(name as AutomationTaskName).function), 'Arn'],
          })),
        ),
      });
      expect(invoke.Resource).toHaveLength(tasks.length);
      for (const statement of others) {
        expect(statement.Resource).toBe('*');
        for (const action of [statement.Action].flat()) expect(action).toMatch(/^(logs|xray):/);
      }
    }
  });
});

describe('scheduled re-checks', () => {
  const dueRechecks = () => synthesized.automation.dueRechecks;
  const resourceOf = (construct: { node: { defaultChild?: unknown } }) =>
    synthesized.automationTemplate.toJSON().Resources[logicalIdOf(construct)];
  const recheckFunction = (name: RecheckTaskName) => dueRechecks().functions[name]!;

  it('has one function per re-check task with exactly its access', () => {
    for (const task of recheckTasks) {
      const fn = recheckFunction(task.name);
      expect({
        task: task.name,
        grants: grantsOf(statementsOf(fn), resourceIdsOf(synthesized)),
      }).toEqual({ task: task.name, grants: expectedGrants(task.access, 'task') });
      expect(resourceOf(fn.function).Properties).toMatchObject({
        Description: `functions/${task.handler}.ts`,
        Architectures: ['arm64'],
        Timeout: 60,
      });
    }
  });

  it('runs DueRechecks of lib/rechecks/state-machine.ts, invoking exactly its two functions', () => {
    const machine = dueRechecks().stateMachine;
    const { Properties } = resourceOf(machine.stateMachine);
    const resources = Object.fromEntries(
      recheckTasks.map((task) => [task.name, `arn:${logicalIdOf(recheckFunction(task.name).function)}`]),
    ) as RecheckTaskResources;
    const definition = JSON.parse(
      Properties.DefinitionString['Fn::Join'][1]
        .map((part: unknown) =>
          typeof part === 'string' ? part : `arn:${(part as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]}`,
        )
        .join(''),
    );
    expect(definition).toEqual(JSON.parse(JSON.stringify(dueRechecksDefinition(resources))));
    expect(Properties).toMatchObject({
      StateMachineName: `${synthesized.automation.stackName}-DueRechecks`,
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
    });
    const [invoke] = resourceOf(machine.role.policy).Properties.PolicyDocument.Statement;
    expect(invoke.Action).toBe('lambda:InvokeFunction');
    expect(invoke.Resource).toEqual(
      expect.arrayContaining(
        recheckTasks.map((task) => ({ 'Fn::GetAtt': [logicalIdOf(recheckFunction(task.name).function), 'Arn'] })),
      ),
    );
    expect(invoke.Resource).toHaveLength(recheckTasks.length);
  });

  it('is started every 15 minutes by EventBridge Scheduler, whose role may start this machine only', () => {
    const machineId = logicalIdOf(dueRechecks().stateMachine.stateMachine);
    const { Properties } = resourceOf(dueRechecks().schedule);
    expect(Properties).toMatchObject({
      ScheduleExpression: 'rate(15 minutes)',
      State: 'ENABLED',
      Target: {
        Arn: { Ref: machineId },
        RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 600 },
      },
    });
    const roleId = Properties.Target.RoleArn['Fn::GetAtt'][0];
    const policies = (type: string) =>
      Object.values(synthesized.automationTemplate.findResources(type)).filter((policy: any) =>
        policy.Properties.Roles?.some((role: any) => role.Ref === roleId),
      );
    expect(policies('AWS::IAM::Policy')).toEqual([]);
    const statements = policies('AWS::IAM::ManagedPolicy').flatMap(
      (policy: any) => policy.Properties.PolicyDocument.Statement,
    );
    expect(statements).toEqual([{ Action: 'states:StartExecution', Effect: 'Allow', Resource: { Ref: machineId } }]);
  });
});

describe('data', () => {
  it('keeps the table on-demand, recoverable, protected and encrypted with the data key, shaped like lib/table.ts', () => {
    synthesized.dataTemplate.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
        SSESpecification: {
          SSEEnabled: true,
          SSEType: 'KMS',
          KMSMasterKeyId: { 'Fn::GetAtt': [logicalIdOf(synthesized.data.keys.data), 'Arn'] },
        },
        KeySchema: [
          { AttributeName: TABLE_KEY.partition, KeyType: 'HASH' },
          { AttributeName: TABLE_KEY.sort, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: tableIndexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partition, KeyType: 'HASH' },
            { AttributeName: index.sort, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      },
    });
  });

  it('expires items on the TTL attribute, the one idempotency records carry', () => {
    synthesized.dataTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
    });
  });

  it('rotates both keys', () => {
    synthesized.dataTemplate.resourceCountIs('AWS::KMS::Key', 2);
    synthesized.dataTemplate.allResourcesProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });

  it('keeps attachments private, versioned, SSE-KMS with a bucket key, and access-logged', () => {
    const bucketId = logicalIdOf(synthesized.data.attachments.bucket);
    synthesized.dataTemplate.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        VersioningConfiguration: { Status: 'Enabled' },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [
            {
              BucketKeyEnabled: true,
              ServerSideEncryptionByDefault: {
                SSEAlgorithm: 'aws:kms',
                KMSMasterKeyID: { 'Fn::GetAtt': [logicalIdOf(synthesized.data.keys.data), 'Arn'] },
              },
            },
          ],
        },
        LoggingConfiguration: { DestinationBucketName: { Ref: Match.anyValue() } },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([Match.objectLike({ NoncurrentVersionExpiration: Match.anyValue() })]),
        },
      },
    });
    synthesized.dataTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('locks the access-log bucket down too', () => {
    synthesized.dataTemplate.resourceCountIs('AWS::S3::Bucket', 2);
    synthesized.dataTemplate.allResourcesProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: Match.objectLike({ BlockPublicAcls: true, RestrictPublicBuckets: true }),
      VersioningConfiguration: { Status: 'Enabled' },
      BucketEncryption: Match.anyValue(),
    });
    synthesized.dataTemplate.resourcePropertiesCountIs(
      'AWS::S3::BucketPolicy',
      {
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      },
      2,
    );
  });
});

describe('REST API', () => {
  it('has one method per route, each behind the x-api-key authorizer but the scraper session and the public docs', () => {
    const methods = synthesized.apiTemplate.findResources('AWS::ApiGateway::Method');
    expect(Object.keys(methods)).toHaveLength(routes.length);
    const methodOf = (route: Route) => {
      const resource = synthesized.api.api.restApi.root.resourceForPath(route.path);
      return methods[logicalIdOf(resource.node.findChild(route.method) as Method)]!;
    };
    for (const route of routes.filter((candidate) => candidate.auth === undefined)) {
      expect(methodOf(route).Properties).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: expect.any(String) },
        // A usage plan applies only to methods that require its key: every client is held to its own limits.
        ApiKeyRequired: true,
      });
    }
    // The handler verifies the scraper token: API Gateway lets the call through, without an API key.
    const tokenRoutes = routes.filter((route) => route.auth === 'scraper-token');
    expect(tokenRoutes.map((route) => `${route.method} ${route.path}`)).toEqual([
      'GET /api/external/v1/ServiceReviews/requests/{requestExternalId}/rpa/session',
    ]);
    // The API's description, the payers' JWKS and their notifications are public (docs/security.md): no authorizer,
    // no key (a notification carries the subscription's channel secret, checked by its handler).
    const publicRoutes = routes.filter((route) => route.auth === 'public');
    expect(publicRoutes.map((route) => `${route.method} ${route.path}`)).toEqual([
      'GET /api/external/v1.1/Payers/jwks/{keySetId}',
      'POST /api/external/v1.1/Payers/notifications/{subscriptionId}',
      'GET /api/external/openapi.json',
      'GET /api/external/docs',
      'GET /api/external/docs/api-reference.js',
    ]);
    for (const route of [...tokenRoutes, ...publicRoutes]) {
      expect(methodOf(route).Properties.AuthorizationType).toBe('NONE');
      expect(methodOf(route).Properties.AuthorizerId).toBeUndefined();
      // No authorizer names a key for them: they could not require one (their method throttle holds them).
      expect(methodOf(route).Properties.ApiKeyRequired).toBeFalsy();
    }
    synthesized.apiTemplate.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.x-api-key',
      AuthorizerResultTtlInSeconds: AUTHORIZER_CACHE_TTL.toSeconds(),
    });
    expect(AUTHORIZER_CACHE_TTL.toSeconds()).toBe(60);
  });

  it('answers gateway errors with problem+json, one response per type of lib/http/gateway-responses.ts', () => {
    const types = new Set(Object.values(GATEWAY_PROBLEMS).map((problem) => problem.type));
    // API Gateway keeps one response per type: two problems of one type would silently lose one.
    expect(types.size).toBe(Object.keys(GATEWAY_PROBLEMS).length);
    synthesized.apiTemplate.resourceCountIs('AWS::ApiGateway::GatewayResponse', types.size);
    for (const type of types) {
      const problem = Object.values(GATEWAY_PROBLEMS).find((candidate) => candidate.type === type)!;
      synthesized.apiTemplate.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        StatusCode: String(problem.status),
        ResponseParameters: Match.objectLike({
          'gatewayresponse.header.Content-Type': "'application/problem+json; charset=utf-8'",
          'gatewayresponse.header.Cache-Control': "'no-store'",
        }),
        ResponseTemplates: { 'application/json': JSON.stringify(problemBody(problem)) },
      });
    }
    synthesized.apiTemplate.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
      StatusCode: '404',
    });
    // Usage keys are required: a client whose key is in no plan gets problem details too, not {"message":"Forbidden"}.
    synthesized.apiTemplate.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'INVALID_API_KEY',
      StatusCode: '403',
    });
  });

  it('accepts uploads as binary, enforces TLS 1.2+, and throttles', () => {
    synthesized.apiTemplate.hasResourceProperties('AWS::ApiGateway::RestApi', {
      BinaryMediaTypes: ['multipart/form-data', 'application/octet-stream'],
      SecurityPolicy: 'SecurityPolicy_TLS13_1_2_2021_06',
      EndpointAccessMode: 'STRICT',
    });
    synthesized.apiTemplate.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: DEFAULT_CLIENT_THROTTLE.rateLimit, BurstLimit: DEFAULT_CLIENT_THROTTLE.burstLimit },
      Quota: { Limit: DEFAULT_QUOTA_PER_DAY, Period: 'DAY' },
    });
  });

  it('meters each client by the usage key its authorizer returns, not by an x-api-key header', () => {
    synthesized.apiTemplate.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
    // The plan the admin CLI attaches clients' keys to (USAGE_PLAN_ID).
    const [planId] = Object.keys(synthesized.apiTemplate.findResources('AWS::ApiGateway::UsagePlan'));
    synthesized.apiTemplate.hasOutput('UsagePlanId', { Value: { Ref: planId } });
  });

  it('throttles each method at the stage above a client, and the routes without a key far below it', () => {
    const settings = stageMethodSettings(synthesized.apiTemplate);
    const stage = settings.find((setting) => setting.ResourcePath === '/*')!;
    // Usage keys are required, so each client has its own bucket: the stage carries several at once.
    expect(stage).toMatchObject({ HttpMethod: '*', ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 });
    expect(stage.ThrottlingRateLimit).toBeGreaterThan(DEFAULT_CLIENT_THROTTLE.rateLimit);
    // The OpenAPI document, the reference page and its script, the scraper session: a method throttle each.
    const unauthenticated = routes.filter((route) => route.auth !== undefined);
    expect(settings).toHaveLength(1 + unauthenticated.length);
    for (const route of unauthenticated) {
      const throttle = UNAUTHENTICATED_ROUTE_THROTTLES[route.auth!];
      expect(settings).toContainEqual({
        HttpMethod: route.method,
        ResourcePath: route.path.replaceAll('/', '~1').replace(/^~1/, '/~1'),
        ThrottlingRateLimit: throttle.rateLimit,
        ThrottlingBurstLimit: throttle.burstLimit,
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
        MetricsEnabled: true,
      });
      expect(throttle.rateLimit).toBeLessThan(DEFAULT_CLIENT_THROTTLE.rateLimit);
      expect(throttle.burstLimit).toBeLessThan(DEFAULT_CLIENT_THROTTLE.burstLimit);
    }
    expect(settings.find((setting) => setting.ResourcePath === '/~1api~1external~1openapi.json')).toMatchObject({
      HttpMethod: 'GET',
      ThrottlingRateLimit: 10,
    });
  });

  it('puts a WAF web ACL on the stage: AWS common and known-bad-inputs rules, and a rate limit per source IP', () => {
    synthesized.apiTemplate.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      Rules: [
        Match.objectLike({
          Name: 'AWSManagedRulesCommonRuleSet',
          OverrideAction: { None: {} },
          Statement: {
            ManagedRuleGroupStatement: {
              VendorName: 'AWS',
              Name: 'AWSManagedRulesCommonRuleSet',
              // Uploads and request documents exceed the rule's 8 KB body limit; API clients need send no User-Agent.
              RuleActionOverrides: [
                { Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } },
                { Name: 'NoUserAgent_HEADER', ActionToUse: { Count: {} } },
              ],
            },
          },
        }),
        Match.objectLike({
          Name: 'AWSManagedRulesKnownBadInputsRuleSet',
          Statement: {
            ManagedRuleGroupStatement: { VendorName: 'AWS', Name: 'AWSManagedRulesKnownBadInputsRuleSet' },
          },
        }),
        Match.objectLike({
          Action: { Block: {} },
          Statement: { RateBasedStatement: { Limit: 6000, EvaluationWindowSec: 60, AggregateKeyType: 'IP' } },
        }),
      ],
    });
    // Per second: above two default clients, below the stage limit of each method (one address cannot take it).
    expect(wafRateLimitPerIp(500) / WAF_WINDOW_SECONDS).toBe(2 * DEFAULT_CLIENT_THROTTLE.rateLimit);
    expect(wafRateLimitPerIp(500) / WAF_WINDOW_SECONDS).toBeLessThan(500);
    const [association] = Object.values(synthesized.apiTemplate.findResources('AWS::WAFv2::WebACLAssociation'));
    const [stageId] = Object.keys(synthesized.apiTemplate.findResources('AWS::ApiGateway::Stage'));
    expect(JSON.stringify(association?.Properties.ResourceArn)).toContain(stageId);
  });

  it('logs WAF requests without a credential: the API key, Authorization, Cookie, path and query string redacted', () => {
    const [logging, ...others] = Object.values(
      synthesized.apiTemplate.findResources('AWS::WAFv2::LoggingConfiguration'),
    );
    expect(others).toEqual([]);
    expect(logging!.Properties.RedactedFields).toEqual([
      { SingleHeader: { Name: 'x-api-key' } },
      { SingleHeader: { Name: 'authorization' } },
      { SingleHeader: { Name: 'cookie' } },
      { UriPath: {} },
      { QueryString: {} },
    ]);
  });

  it('logs access as JSON to an encrypted group, traces, and never logs request or response data', () => {
    synthesized.apiTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
      TracingEnabled: true,
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('^\\{.*"requestId"') },
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          DataTraceEnabled: false,
          LoggingLevel: 'ERROR',
          ThrottlingRateLimit: Match.anyValue(),
          ThrottlingBurstLimit: Match.anyValue(),
        }),
      ]),
    });
    // A method's own settings (the routes without a key) keep the stage's logging: errors only, no data.
    for (const setting of stageMethodSettings(synthesized.apiTemplate)) {
      expect(setting).toMatchObject({ DataTraceEnabled: false, LoggingLevel: 'ERROR', MetricsEnabled: true });
    }
    const format = synthesized.apiTemplate.findResources('AWS::ApiGateway::Stage');
    const accessLogFormat = Object.values(format)[0]?.Properties.AccessLogSetting.Format as string;
    expect(() => JSON.parse(accessLogFormat)).not.toThrow();
    expect(accessLogFormat).not.toContain('$context.path');
    // Who called: the client and which of its keys (never the key), from the authorizer's context.
    expect(JSON.parse(accessLogFormat)).toMatchObject({
      clientId: '$context.authorizer.clientId',
      keyId: '$context.authorizer.keyId',
    });
  });
});

describe('usage keys: required by default, a switch for a deployment made before', () => {
  it('reads usageKeysRequired from context: true unless told false, and nothing else', () => {
    const configOf = (context: Record<string, unknown>) => serviceConfigOf(new App({ context }));
    expect(configOf({}).usageKeysRequired).toBe(true);
    expect(configOf({ usageKeysRequired: 'false' }).usageKeysRequired).toBe(false);
    expect(configOf({ usageKeysRequired: false }).usageKeysRequired).toBe(false);
    expect(configOf({ usageKeysRequired: 'true' }).usageKeysRequired).toBe(true);
    for (const usageKeysRequired of ['no', 0, 'False']) {
      expect(() => configOf({ usageKeysRequired })).toThrow(/usageKeysRequired/);
    }
  });

  it("with -c usageKeysRequired=false: no method requires a key, and the stage and WAF hold every address to a client's figures", () => {
    // Bundling off: the same constructs, only the assets are left out (monitoring.test.ts does the same).
    const legacy = synthesize({ context: { 'aws:cdk:bundling-stacks': [], usageKeysRequired: 'false' } });
    try {
      const methods = Object.values(legacy.apiTemplate.findResources('AWS::ApiGateway::Method'));
      expect(methods).toHaveLength(routes.length);
      for (const method of methods) expect(method.Properties.ApiKeyRequired).toBeFalsy();
      const settings = stageMethodSettings(legacy.apiTemplate);
      expect(settings.find((setting) => setting.ResourcePath === '/*')).toMatchObject({
        ThrottlingRateLimit: DEFAULT_CLIENT_THROTTLE.rateLimit,
        ThrottlingBurstLimit: DEFAULT_CLIENT_THROTTLE.burstLimit,
      });
      // The routes without a key keep their own throttles.
      expect(settings).toHaveLength(1 + routes.filter((route) => route.auth !== undefined).length);
      // Below the stage's 50 per second even so: 40 per second from one address.
      legacy.apiTemplate.hasResourceProperties('AWS::WAFv2::WebACL', {
        Rules: Match.arrayWith([
          Match.objectLike({
            Name: 'RatePerSourceIp',
            Statement: { RateBasedStatement: { Limit: 2400, EvaluationWindowSec: 60, AggregateKeyType: 'IP' } },
          }),
        ]),
      });
      // The switch changes settings, not resources.
      const counts = (templates: typeof legacy.apiTemplates) =>
        templates.map((template) => Object.keys(template.toJSON().Resources).length);
      expect(counts(legacy.apiTemplates)).toEqual(counts(synthesized.apiTemplates));
    } finally {
      legacy.cleanUp();
    }
  }, 180_000);
});
