import {
  App,
  AspectPriority,
  Aspects,
  type Environment,
  RemovalPolicies,
  type Stage,
  Tags,
  Validations,
} from 'aws-cdk-lib';
import { CfnTable } from 'aws-cdk-lib/aws-dynamodb';
import { AwsSolutionsChecks, HIPAASecurityChecks } from 'cdk-nag';
import { ApiStack } from '#infra/api-stack';
import { AuditStack } from '#infra/audit-stack';
import { AutomationStack } from '#infra/automation-stack';
import { serviceConfigOf } from '#infra/config';
import { secretsReaderRoleName } from '#infra/constructs/encryption-keys';
import { DataStack } from '#infra/data-stack';
import { EventsStack } from '#infra/events-stack';
import { MonitoringStack } from '#infra/monitoring-stack';
import { type RouteAccess, routeAccess } from '#lib/routes/access-model';
import {
  type AutomationTask,
  automationTasks,
  type InvokedFunction,
  invokedFunctions,
  type RecheckTask,
  recheckTasks,
} from '#lib/routes/automation-tasks';
import {
  automationEventFunctions,
  type EventFunction,
  type ExecutionStatusTrigger,
  eventFunctions,
  type ScheduleTrigger,
  scheduledPayerFunctions,
  type WebhookDeliveryTrigger,
  webhookDeliveryFunctions,
} from '#lib/routes/event-functions';
import { type HandlerId, type Route, routes } from '#lib/routes/route-table';
import cdkJson from '../cdk.json' with { type: 'json' };

export interface ServiceReviewAppOptions {
  /** Where the cloud assembly goes; by default the CLI's directory, or a temporary one. */
  outdir?: string;
  /** Context over cdk.json's (what `-c key=value` does on the CLI): infra/config.ts. */
  context?: Record<string, unknown>;
  env?: Environment;
  /** The route table, event functions, automation tasks and invoked functions; the real ones unless a test substitutes its own. */
  routes?: readonly Route[];
  /** What each route's function may touch, by handler (a test's own routes give their handlers other access). */
  routeAccess?: Readonly<Record<HandlerId, RouteAccess>>;
  eventFunctions?: readonly EventFunction[];
  automationTasks?: readonly AutomationTask[];
  automationEventFunctions?: readonly EventFunction<ExecutionStatusTrigger>[];
  invokedFunctions?: readonly InvokedFunction[];
  recheckTasks?: readonly RecheckTask[];
  scheduledPayerFunctions?: readonly EventFunction<ScheduleTrigger>[];
  webhookDeliveryFunctions?: readonly EventFunction<WebhookDeliveryTrigger>[];
}

/** The automation and events stacks' names (their ids at the app's top level), which name their secrets readers' roles. */
const AUTOMATION_STACK = 'ServiceReviewAutomation';
const EVENTS_STACK = 'ServiceReviewEvents';

/**
 * cdk-nag's AwsSolutions and HIPAA Security packs as CDK validation plugins: a finding not
 * acknowledged (with a reason) on its resource or an ancestor fails synthesis.
 */
export const addComplianceChecks = (app: Stage) => {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new HIPAASecurityChecks(app));
};

/**
 * The whole app, as `cdk synth` builds it and as the tests build it in-process. Feature flags come
 * from cdk.json in both cases.
 */
export const buildServiceReviewApp = (options: ServiceReviewAppOptions = {}) => {
  const app = new App({ context: { ...cdkJson.context, ...options.context }, outdir: options.outdir });
  addComplianceChecks(app);
  const config = serviceConfigOf(app);
  const env = options.env;
  const tasks = options.automationTasks ?? automationTasks;
  const invoked = options.invokedFunctions ?? invokedFunctions;
  const apiRoutes = options.routes ?? routes;
  const deliverers = options.webhookDeliveryFunctions ?? webhookDeliveryFunctions;
  const data = new DataStack(app, 'ServiceReviewData', {
    env,
    description: 'Service review: keys, table, attachments',
    // The run credentials function and the webhook delivery functions, named ahead of their stacks: the
    // secrets key lets nobody else decrypt.
    secretsReaderRoleNames: [
      ...[...invoked, ...tasks]
        .filter((fn) => fn.access.secrets === 'decrypt')
        .map((fn) => secretsReaderRoleName(AUTOMATION_STACK, fn.name)),
      ...deliverers
        .filter((fn) => fn.access.webhookSecrets === 'open')
        .map((fn) => secretsReaderRoleName(EVENTS_STACK, fn.name)),
    ],
  });
  const automation = new AutomationStack(app, AUTOMATION_STACK, {
    env,
    description: 'Service review: automation (state machines, portal workers)',
    data,
    tasks,
    eventFunctions: options.automationEventFunctions ?? automationEventFunctions,
    invokedFunctions: invoked,
    recheckTasks: options.recheckTasks ?? recheckTasks,
    scheduledPayerFunctions: options.scheduledPayerFunctions ?? scheduledPayerFunctions,
    ...(config.publicApiBaseUrl ? { publicApiBaseUrl: config.publicApiBaseUrl } : {}),
  });
  const api = new ApiStack(app, 'ServiceReviewApi', {
    env,
    description: 'Service review: REST API and functions',
    data,
    automation,
    routes: apiRoutes,
    routeAccess: options.routeAccess ?? routeAccess,
    eventFunctions: options.eventFunctions ?? eventFunctions,
  });
  const events = new EventsStack(app, EVENTS_STACK, {
    env,
    description: 'Service review: the outbox pipe, the service-review event bus, webhook delivery',
    data,
    functions: deliverers,
  });
  const audit = new AuditStack(app, 'ServiceReviewAudit', {
    env,
    description: 'Service review: audit trail (locked bucket, delivery, CloudTrail data events, queries)',
    data,
    functionStacks: [api, automation, events],
    routes: apiRoutes,
  });
  const monitoring = new MonitoringStack(app, 'ServiceReviewMonitoring', {
    env,
    description: 'Service review: alarms, their topic, the dashboard',
    api,
    automation,
    events,
    audit,
    routes: apiRoutes,
  });
  Tags.of(app).add('stage', config.stage);
  if (config.removalPolicy === 'destroy') destroyWithStacks(app, data, audit);
  return { app, data, automation, api, events, audit, monitoring, config };
};

/**
 * `-c removalPolicy=destroy` (refused for production stages, infra/config.ts): a throwaway stack's
 * resources go when it is deleted, the table's deletion protection and the data and audit stacks'
 * termination protection included. Buckets must be emptied first (S3 refuses to delete others). The
 * audit trail's buckets and key stay even then: its records are under Object Lock for six years,
 * nobody can empty that bucket, and without the key they could not be read.
 */
const destroyWithStacks = (app: App, data: DataStack, audit: AuditStack) => {
  RemovalPolicies.of(app).destroy();
  RemovalPolicies.of(audit).retain({
    applyToResourceTypes: ['AWS::S3::Bucket', 'AWS::KMS::Key'],
    // Applied after the app's: the last policy applied is the one kept.
    priority: AspectPriority.MUTATING + 1,
  });
  data.terminationProtection = false;
  audit.terminationProtection = false;
  Aspects.of(data).add({
    visit: (node) => {
      if (node instanceof CfnTable) node.deletionProtectionEnabled = false;
    },
  });
};
