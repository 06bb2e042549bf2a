import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { ApiAreaStack, apiAreaOf } from '#infra/api-area-stack';
import type { AutomationStack } from '#infra/automation-stack';
import { ObjectCreatedTriggers } from '#infra/constructs/object-created-triggers';
import { bindRouteAccess } from '#infra/constructs/route-access';
import { ServiceApi } from '#infra/constructs/service-api';
import { ServiceFunction } from '#infra/constructs/service-function';
import type { DataStack } from '#infra/data-stack';
import { authorizerAccess, type RouteAccess } from '#lib/routes/access-model';
import type { EventFunction } from '#lib/routes/event-functions';
import { functionNameOf, type HandlerId, type Route } from '#lib/routes/route-table';

export interface ApiStackProps extends StackProps {
  data: DataStack;
  /** Routes with `automation` access start and read its state machines. */
  automation: AutomationStack;
  routes: readonly Route[];
  /** What each route's function may touch, by its handler (lib/routes/access-model.ts `routeAccess`). */
  routeAccess: Readonly<Record<HandlerId, RouteAccess>>;
  eventFunctions: readonly EventFunction[];
}

/**
 * The REST API and the functions: one per route of the route table (lib/routes/route-table.ts), the
 * authorizer, and one per event function, each with only the access lib/routes/access-model.ts gives it.
 * A route's function, role, policies and log group are in the nested stack of its API area
 * (infra/api-area-stack.ts), its method and the permission to invoke the function here, on the one
 * RestApi: the stage's deployment depends on every method of this template, and CloudFormation's 500
 * resources count per template.
 */
export class ApiStack extends Stack {
  readonly api: ServiceApi;
  /** The nested stacks of the routes' functions, by API area (`Requests`, `Portals`, ...). */
  readonly areas: Record<string, ApiAreaStack> = {};
  /** Every function of the stack by name: the routes' (in their areas), the authorizer, the event functions. */
  readonly functions: Record<string, ServiceFunction> = {};

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { data, automation } = props;
    // Some data resources and the state machines are addressed by name rather than by reference:
    // make the order explicit.
    this.addStackDependency(data);
    this.addStackDependency(automation);
    const logKey = data.keys.data;

    const authorizer = new ServiceFunction(this, 'Authorizer', { handler: 'authorizer', invocation: 'api', logKey });
    bindRouteAccess(authorizer, authorizerAccess, data);
    grantUsageIdentifierKeyRead(authorizer, data.table.table);
    this.functions.Authorizer = authorizer;
    this.api = new ServiceApi(this, 'Api', { authorizer, logKey, routes: props.routes });

    for (const route of props.routes) {
      const name = functionNameOf(route);
      // Unique across areas as within one stack: alarms, audit queries and `npm run invoke` know a function by name.
      if (this.functions[name])
        throw new Error(`Two functions named ${name}: ${route.method} ${route.path} and another`);
      const fn = new ServiceFunction(this.areaOf(route), name, {
        handler: route.handler,
        invocation: 'api',
        logKey,
        ...(route.assets ? { assets: route.assets } : {}),
      });
      bindRouteAccess(fn, props.routeAccess[route.handler], data, automation);
      this.api.addRoute(route, fn);
      this.functions[name] = fn;
    }

    // Here rather than in an area: moved, a function's new notification would be added before the old one is
    // removed, and S3 refuses two ObjectCreated configurations that overlap.
    if (props.eventFunctions.length > 0) {
      const objectCreated = new ObjectCreatedTriggers(this, 'AttachmentsObjectCreated', {
        bucketName: data.attachments.bucketName,
      });
      for (const eventFunction of props.eventFunctions) {
        const fn = new ServiceFunction(this, eventFunction.name, {
          handler: eventFunction.handler,
          invocation: 'event',
          logKey,
        });
        bindRouteAccess(fn, eventFunction.access, data, automation);
        objectCreated.add(fn, eventFunction.trigger.s3ObjectCreated);
        this.functions[fn.node.id] = fn;
      }
    }

    new CfnOutput(this, 'ApiUrl', { description: 'Base URL; append /api/external/...', value: this.api.restApi.url });
    new CfnOutput(this, 'UsagePlanId', {
      description: "The clients' usage plan: USAGE_PLAN_ID for the admin CLI",
      value: this.api.usagePlan.usagePlanId,
    });
  }

  /** The nested stack of a route's API area, created with the area's first route. */
  private areaOf(route: Route): ApiAreaStack {
    const area = apiAreaOf(route);
    this.areas[area] ??= new ApiAreaStack(this, area);
    return this.areas[area];
  }
}

/**
 * The authorizer reads one attribute of Client items, usageIdentifierKey (the usage plan's key for
 * the client), and nothing else: CLIENT# partitions also hold the client's PHI, which a projection
 * on that one attribute keeps out of reach (IAM checks the attributes a read asks for).
 */
const grantUsageIdentifierKeyRead = (authorizer: ServiceFunction, table: ITable) => {
  authorizer.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['dynamodb:GetItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CLIENT#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['usageIdentifierKey'] },
        StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
      },
    }),
  );
};
