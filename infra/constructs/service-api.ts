import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  type CfnRestApi,
  EndpointType,
  IdentitySource,
  LogGroupLogDestination,
  type MethodDeploymentOptions,
  MethodLoggingLevel,
  Period,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  type ThrottleSettings,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnLoggingConfiguration, CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { serviceConfigOf } from '#infra/config';
import { DEFAULT_CLIENT_THROTTLE, DEFAULT_QUOTA_PER_DAY } from '#lib/config/defaults';
import { BINARY_MEDIA_TYPES, GATEWAY_LIMITS, GATEWAY_PROBLEMS, problemBody } from '#lib/http/gateway-responses';
import { baseHeaders } from '#lib/http/response';
import type { Route } from '#lib/routes/route-table';
import { RouteIntegration } from './route-integration.ts';
import type { ServiceFunction } from './service-function.ts';

const STAGE_NAME = 'prod';

/**
 * How long API Gateway reuses an authorizer answer for the same x-api-key value: a revoked key
 * keeps working for at most this long (docs/infrastructure.md).
 */
export const AUTHORIZER_CACHE_TTL = Duration.seconds(GATEWAY_LIMITS.authorizerCacheTtlSeconds);

/** What the WAF log leaves out (header names in lower case, as WAF requires). */
const WAF_REDACTED_FIELDS = [
  { singleHeader: { Name: 'x-api-key' } },
  { singleHeader: { Name: 'authorization' } },
  { singleHeader: { Name: 'cookie' } },
  { uriPath: {} },
  { queryString: {} },
];

/**
 * Stage-wide limits, requests per second and burst, which API Gateway applies to each method of the stage,
 * whoever calls: what all clients together may send a route. With usage keys required (the default,
 * infra/config.ts), each client is also held to its usage plan (DEFAULT_CLIENT_THROTTLE unless it has its
 * own), and the stage carries ten default clients at once. Without them no per-client limit applies on AWS,
 * so the stage keeps a client's figures: no single client can take more than one could.
 */
const stageThrottle = (usageKeysRequired: boolean) =>
  usageKeysRequired ? { rateLimit: 500, burstLimit: 1000 } : { ...DEFAULT_CLIENT_THROTTLE };

/**
 * Method throttles of the routes without an API key, which no usage plan meters: all their callers together,
 * so anonymous traffic is bounded far below the stage's, in requests and in the Lambda concurrency it takes.
 */
export const UNAUTHENTICATED_ROUTE_THROTTLES: Record<NonNullable<Route['auth']>, ThrottleSettings> = {
  // The OpenAPI document, the reference page and its script: people reading, now and then a client generator.
  public: { rateLimit: 10, burstLimit: 20 },
  // The scraper session: staff browsers on the runs they watch (a page reloads every 5 s while a run lasts).
  'scraper-token': { rateLimit: 25, burstLimit: 50 },
};

/** WAF counts each source IP's requests over this many seconds (60: its shortest, so a flood is cut soonest). */
export const WAF_WINDOW_SECONDS = 60;

/**
 * The WAF rate-based rule: requests per source IP in any WAF_WINDOW_SECONDS, blocked above. Twice a default
 * client's rate (an address may carry a few clients, and its retries after a 429 count too), but never above
 * 80% of the stage's: one address, with a key or without, cannot take a route's whole stage limit from the
 * other clients.
 */
export const wafRateLimitPerIp = (stageRate: number) =>
  Math.floor(Math.min(2 * DEFAULT_CLIENT_THROTTLE.rateLimit, 0.8 * stageRate) * WAF_WINDOW_SECONDS);

/** Why a route without the authorizer is safe: cdk-nag's acknowledgement for its method. */
const UNAUTHORIZED_ROUTE_REASONS: Record<NonNullable<Route['auth']>, string> = {
  'scraper-token':
    'The scraper session is opened with a scraper token, not an API key: the handler verifies a signed (HS256), 15-minute token scoped to one client, request and client user, and answers 401 to anything else.',
  public:
    "The API's own description (OpenAPI document, reference page and its script) is public on purpose: it holds no PHI, no credential and nothing of any client, and has a method throttle of its own (docs/security.md).",
};

/** The stage's method settings of the routes without an API key: their throttle, and the stage's logging and metrics. */
const unauthenticatedMethodOptions = (routes: readonly Route[]): Record<string, MethodDeploymentOptions> =>
  Object.fromEntries(
    routes.flatMap((route) => {
      if (route.auth === undefined) return [];
      const { rateLimit, burstLimit } = UNAUTHENTICATED_ROUTE_THROTTLES[route.auth];
      // A method's settings replace the stage's (`/*/*`) for it: logging, data trace and metrics as the stage's.
      const options: MethodDeploymentOptions = {
        throttlingRateLimit: rateLimit,
        throttlingBurstLimit: burstLimit,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
      };
      return [[`${route.path}/${route.method}`, options]];
    }),
  );

export interface ServiceApiProps {
  /** The Lambda REQUEST authorizer (functions/authorizer.ts). */
  authorizer: ServiceFunction;
  /** The routes `addRoute` will add: those without an API key get their method throttle on the stage. */
  routes: readonly Route[];
  /** Encrypts the access and execution log groups. */
  logKey: IKey;
}

/**
 * The REST API: stage with JSON access logs and error-only execution logs (never request or
 * response data: PHI), X-Ray, throttling and a usage plan; the x-api-key authorizer on every
 * method; gateway responses in the problem+json shape handlers use. Routes are added with `addRoute`.
 * Each part is a function of its own below, creating its resources in this construct itself (their
 * ids, and so the logical ids, are those of one scope).
 */
export class ServiceApi extends Construct {
  readonly restApi: RestApi;
  /** Each client's default throttle; the admin CLI attaches clients' keys to it (USAGE_PLAN_ID). */
  readonly usagePlan: UsagePlan;
  private readonly authorizer: RequestAuthorizer;
  private readonly usageKeysRequired: boolean;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    this.usageKeysRequired = serviceConfigOf(this).usageKeysRequired;
    const stage = stageThrottle(this.usageKeysRequired);
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      encryptionKey: props.logKey,
      // The access log is the audit trail of who called what: kept as long as HIPAA records.
      retention: RetentionDays.SIX_YEARS,
    });
    this.restApi = addRestApi(this, { accessLogs, stage, routes: props.routes });
    ownExecutionLogs(this, this.restApi, props.logKey);
    this.usagePlan = this.restApi.addUsagePlan('UsagePlan', {
      description: 'Default throttle of each API client (its API Gateway key is the usageIdentifierKey)',
      // Each client's own bucket, keyed by the usageIdentifierKey the authorizer returns: the local gateway's default too.
      throttle: DEFAULT_CLIENT_THROTTLE,
      // The same daily quota a client's own plan gets by default (docs/security.md, "Throttling and quotas").
      quota: { limit: DEFAULT_QUOTA_PER_DAY, period: Period.DAY },
      apiStages: [{ api: this.restApi, stage: this.restApi.deploymentStage }],
    });
    addWebAcl(this, this.restApi, props.logKey, wafRateLimitPerIp(stage.rateLimit));
    this.authorizer = new RequestAuthorizer(this, 'ApiKeyAuthorizer', {
      handler: props.authorizer.function,
      identitySources: [IdentitySource.header('x-api-key')],
      resultsCacheTtl: AUTHORIZER_CACHE_TTL,
    });
    addGatewayResponses(this.restApi);
    acknowledgeRestApiFindings(this.restApi);
  }

  /**
   * Adds a route: its method on its path, behind the authorizer (unless the route authenticates its
   * callers itself), proxied to its function. The method and the permission to invoke the function are
   * here, whichever stack the function is in (docs/infrastructure.md, "API areas"), and the stage's
   * deployment waits for both.
   */
  addRoute(route: Route, fn: ServiceFunction) {
    const resource = this.restApi.root.resourceForPath(route.path);
    const integration = new RouteIntegration(fn.function, fn.node.id, this.restApi, STAGE_NAME);
    if (route.auth === undefined) {
      resource.addMethod(route.method, integration, {
        authorizer: this.authorizer,
        authorizationType: AuthorizationType.CUSTOM,
        apiKeyRequired: this.usageKeysRequired,
      });
      return;
    }
    const method = resource.addMethod(route.method, integration, { authorizationType: AuthorizationType.NONE });
    const reason = UNAUTHORIZED_ROUTE_REASONS[route.auth];
    Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason }, { id: 'AwsSolutions-COG4', reason });
  }
}

/**
 * The REST API and its one stage: JSON access logs, error-only execution logs, metrics, X-Ray, the
 * stage's throttle and the method throttles of the routes without an API key; TLS 1.2 at least.
 */
function addRestApi(
  scope: Construct,
  {
    accessLogs,
    stage,
    routes,
  }: { accessLogs: LogGroup; stage: ReturnType<typeof stageThrottle>; routes: readonly Route[] },
): RestApi {
  const restApi = new RestApi(scope, 'RestApi', {
    restApiName: Stack.of(scope).stackName,
    description: 'Service review external API (/api/external/...)',
    endpointConfiguration: { types: [EndpointType.REGIONAL] },
    binaryMediaTypes: [...BINARY_MEDIA_TYPES],
    // Usage plans meter the key the authorizer names (the client's), never an x-api-key header as such.
    apiKeySourceType: ApiKeySourceType.AUTHORIZER,
    // API Gateway needs the account-level CloudWatch role to write any log; other APIs share it.
    cloudWatchRole: true,
    cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
    deployOptions: {
      stageName: STAGE_NAME,
      accessLogDestination: new LogGroupLogDestination(accessLogs),
      accessLogFormat: accessLogFormat(),
      loggingLevel: MethodLoggingLevel.ERROR,
      dataTraceEnabled: false,
      metricsEnabled: true,
      tracingEnabled: true,
      throttlingRateLimit: stage.rateLimit,
      throttlingBurstLimit: stage.burstLimit,
      methodOptions: unauthenticatedMethodOptions(routes),
    },
  });
  // TLS 1.2 minimum (TLS 1.3 preferred) on the execute-api endpoint; enhanced policies require an access mode.
  const cfnRestApi = restApi.node.defaultChild as CfnRestApi;
  cfnRestApi.securityPolicy = 'SecurityPolicy_TLS13_1_2_2021_06';
  cfnRestApi.endpointAccessMode = 'STRICT';
  return restApi;
}

/** Ids, timings and outcomes only. resourcePath is the route template, so no client-chosen id is logged. */
const accessLogFormat = () =>
  AccessLogFormat.custom(
    JSON.stringify({
      requestId: AccessLogField.contextRequestId(),
      requestTime: AccessLogField.contextRequestTime(),
      sourceIp: AccessLogField.contextIdentitySourceIp(),
      userAgent: AccessLogField.contextIdentityUserAgent(),
      clientId: AccessLogField.contextAuthorizer('clientId'),
      keyId: AccessLogField.contextAuthorizer('keyId'),
      httpMethod: AccessLogField.contextHttpMethod(),
      resourcePath: AccessLogField.contextResourcePath(),
      status: AccessLogField.contextStatus(),
      errorType: AccessLogField.contextErrorResponseType(),
      responseLength: AccessLogField.contextResponseLength(),
      responseLatency: AccessLogField.contextResponseLatency(),
      integrationLatency: AccessLogField.contextIntegrationLatency(),
      authorizerLatency: AccessLogField.contextAuthorizerLatency(),
      xrayTraceId: AccessLogField.contextXrayTraceId(),
    }),
  );

/** API Gateway would create the execution-log group itself, unencrypted and kept forever: own it first. */
function ownExecutionLogs(scope: Construct, restApi: RestApi, logKey: IKey) {
  const executionLogs = new LogGroup(scope, 'ExecutionLogs', {
    logGroupName: `API-Gateway-Execution-Logs_${restApi.restApiId}/${STAGE_NAME}`,
    encryptionKey: logKey,
    retention: RetentionDays.ONE_YEAR,
  });
  restApi.deploymentStage.node.addDependency(executionLogs);
}

/** One gateway response per type (lib/http/gateway-responses.ts has one problem per type, which a test holds it to). */
function addGatewayResponses(restApi: RestApi) {
  const headers = Object.fromEntries(
    Object.entries({ ...baseHeaders, 'Content-Type': 'application/problem+json; charset=utf-8' }).map(
      ([name, value]) => [name, `'${value}'`],
    ),
  );
  for (const problem of Object.values(GATEWAY_PROBLEMS)) {
    restApi.addGatewayResponse(`Gateway${problem.type}`, {
      type: ResponseType.of(problem.type),
      statusCode: String(problem.status),
      responseHeaders: headers,
      templates: { 'application/json': JSON.stringify(problemBody(problem)) },
    });
  }
}

/** cdk-nag's findings on the API that do not apply here, each with its reason. */
function acknowledgeRestApiFindings(restApi: RestApi) {
  Validations.of(restApi).acknowledge(
    {
      id: 'AwsSolutions-APIG2',
      reason:
        'Bodies are validated by the handlers against the published JSON Schemas, because the spec fixes the error format (Validation result) that a gateway validator cannot produce.',
    },
    {
      id: 'AwsSolutions-COG4',
      reason:
        'API clients are integration partners authenticated by API key through the Lambda REQUEST authorizer, not Cognito users.',
    },
    {
      id: 'HIPAA.Security-APIGWCacheEnabledAndEncrypted',
      reason: 'Responses carry PHI and are per tenant (Cache-Control: no-store): nothing is cached at the gateway.',
    },
    {
      id: 'HIPAA.Security-APIGWSSLEnabled',
      reason:
        'A client certificate authenticates API Gateway to HTTP backends; every integration here is a Lambda function invoked through IAM.',
    },
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'The account-level API Gateway logging role uses the AWS managed policy meant for it (log delivery only).',
    },
  );
}

/**
 * A regional WAF web ACL on the stage: AWS's common and known-bad-inputs rule groups, and a rate-based
 * rule per source IP. Two common rules only count: SizeRestrictions_BODY blocks bodies over 8 KB
 * (request documents and uploads are larger; the gateway and handlers bound sizes), and
 * NoUserAgent_HEADER blocks server-to-server clients that send no User-Agent. Its log leaves out
 * the API key, and the path and query string (client-chosen ids), as the access log does.
 */
function addWebAcl(scope: Construct, restApi: RestApi, logKey: IKey, ratePerIp: number) {
  const webAcl = new CfnWebACL(scope, 'WebAcl', {
    scope: 'REGIONAL',
    defaultAction: { allow: {} },
    visibilityConfig: wafVisibility('ServiceReviewApi'),
    rules: [
      managedRuleGroup('AWSManagedRulesCommonRuleSet', 0, ['SizeRestrictions_BODY', 'NoUserAgent_HEADER']),
      managedRuleGroup('AWSManagedRulesKnownBadInputsRuleSet', 1),
      {
        name: 'RatePerSourceIp',
        priority: 2,
        action: { block: {} },
        statement: {
          rateBasedStatement: { limit: ratePerIp, evaluationWindowSec: WAF_WINDOW_SECONDS, aggregateKeyType: 'IP' },
        },
        visibilityConfig: wafVisibility('RatePerSourceIp'),
      },
    ],
  });
  new CfnWebACLAssociation(scope, 'WebAclAssociation', {
    resourceArn: restApi.deploymentStage.stageArn,
    webAclArn: webAcl.attrArn,
  });
  addWafLogging(scope, webAcl, logKey);
}

const wafVisibility = (metricName: string) => ({
  cloudWatchMetricsEnabled: true,
  sampledRequestsEnabled: false,
  metricName,
});

/** An AWS managed rule group, its rules `counted` only. */
const managedRuleGroup = (name: string, priority: number, counted: string[] = []): CfnWebACL.RuleProperty => ({
  name,
  priority,
  overrideAction: { none: {} },
  statement: {
    managedRuleGroupStatement: {
      vendorName: 'AWS',
      name,
      ruleActionOverrides: counted.map((rule) => ({ name: rule, actionToUse: { count: {} } })),
    },
  },
  visibilityConfig: wafVisibility(name),
});

/** WAF writes only to log groups named aws-waf-logs-…, given by an ARN without the trailing ':*'. */
function addWafLogging(scope: Construct, webAcl: CfnWebACL, logKey: IKey) {
  const wafLogs = new LogGroup(scope, 'WafLogs', {
    logGroupName: `aws-waf-logs-${Stack.of(scope).stackName}`,
    encryptionKey: logKey,
    retention: RetentionDays.ONE_YEAR,
  });
  new CfnLoggingConfiguration(scope, 'WafLogging', {
    resourceArn: webAcl.attrArn,
    logDestinationConfigs: [
      Stack.of(scope).formatArn({
        service: 'logs',
        resource: 'log-group',
        resourceName: wafLogs.logGroupName,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    ],
    // Every credential a request can carry: the API key, the scraper token (Bearer, or the session's cookie,
    // or a ?token= link: the query string), and the ids in the path.
    redactedFields: WAF_REDACTED_FIELDS,
  });
}
