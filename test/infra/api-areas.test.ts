import { Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAreaOf, apiAreaStackId, DESCRIPTION_AREA } from '#infra/api-area-stack';
import { functionLogicalId } from '#infra/constructs/service-function';
import { eventFunctions } from '#lib/routes/event-functions';
import { functionNameOf, type Route, routes } from '#lib/routes/route-table';
import { logicalIdOf, synthesize, templateOf, templatesOf } from './synthesized-app.ts';

/*
 * The API stack split by API area (infra/api-area-stack.ts): each route's function in its area's nested
 * stack, every method on the one RestApi of the API stack, whose deployment depends on all of them. On the
 * whole app with both cdk-nag packs; bundling is skipped (nothing here reads a bundle).
 */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
const resourcesOf = (synthesized: ReturnType<typeof synthesize>, type: string) =>
  Object.entries(synthesized.apiTemplate.toJSON().Resources as Record<string, Resource>).filter(
    ([, resource]) => resource.Type === type,
  );
/** Every stack of the app, nested ones included, with its template. */
const everyTemplate = (synthesized: ReturnType<typeof synthesize>) =>
  [
    synthesized.data,
    synthesized.automation,
    synthesized.api,
    synthesized.events,
    synthesized.audit,
    synthesized.monitoring,
  ]
    .flatMap(templatesOf)
    .map((template) => template.toJSON().Resources as Record<string, Resource>);

describe('apiAreaOf: the collection a route path names after its version', () => {
  it('puts both versions of a collection, and what is under it, in one area', () => {
    expect(apiAreaOf({ path: '/api/external/v1/Requests/{appointmentId}' })).toBe('Requests');
    expect(apiAreaOf({ path: '/api/external/v1.1/Requests' })).toBe('Requests');
    expect(apiAreaOf({ path: '/api/external/v1.1/Requests/{externalId}/Attachments/{attachmentId}' })).toBe('Requests');
    expect(apiAreaOf({ path: '/api/external/v1.1/Requests/{externalId}/submit' })).toBe('Requests');
    expect(apiAreaOf({ path: '/api/external/v1/Portals/accounts/{externalId}' })).toBe('Portals');
    expect(apiAreaOf({ path: '/api/external/v1.1/Portals/accounts/filter' })).toBe('Portals');
    expect(apiAreaOf({ path: '/api/external/v1/ServiceReviews/requests/rpa/batch/check-auth-status' })).toBe(
      'ServiceReviews',
    );
    expect(apiAreaOf({ path: '/api/external/v1.1/Payers/connections' })).toBe('Payers');
    expect(apiAreaOf({ path: '/api/external/v1.1/Payers/jwks/{keySetId}' })).toBe('Payers');
  });

  it("gives the paths outside a version, the API's own description, one area", () => {
    expect(apiAreaOf({ path: '/api/external/openapi.json' })).toBe(DESCRIPTION_AREA);
    expect(apiAreaOf({ path: '/api/external/docs/api-reference.js' })).toBe(DESCRIPTION_AREA);
  });

  it('refuses a path outside the API, and a segment after the version that is no collection name', () => {
    expect(() => apiAreaOf({ path: '/health' })).toThrow(/outside \/api\/external\//);
    expect(() => apiAreaOf({ path: '/api/external/v1.1/payer-connections' })).toThrow(/not a collection name/);
    expect(() => apiAreaOf({ path: '/api/external/v2' })).toThrow(/not a collection name/);
  });
});

describe('the real app', () => {
  let app: ReturnType<typeof synthesize>;
  beforeAll(() => {
    app = synthesize({ context: NO_BUNDLING });
  }, 180_000);
  afterAll(() => app?.cleanUp());

  it("puts each route's function in its area's nested stack, and the authorizer and event functions in the API stack", () => {
    expect(Object.keys(app.api.areas).sort()).toEqual(
      ['Description', 'Payers', 'Portals', 'Requests', 'Schemas', 'ServiceReviews', 'Webhooks'].sort(),
    );
    for (const route of routes) {
      const fn = app.api.functions[functionNameOf(route)]!;
      expect({ route: route.path, stack: Stack.of(fn).node.path }).toEqual({
        route: route.path,
        stack: `ServiceReviewApi/${apiAreaStackId(apiAreaOf(route))}`,
      });
    }
    for (const name of ['Authorizer', ...eventFunctions.map((fn) => fn.name)]) {
      expect(Stack.of(app.api.functions[name]!)).toBe(app.api);
    }
    // Each area by a readable logical id in the API stack's template.
    expect(
      resourcesOf(app, 'AWS::CloudFormation::Stack')
        .map(([id]) => id)
        .sort(),
    ).toEqual(Object.keys(app.api.areas).map(apiAreaStackId).sort());
  });

  it('keeps the one RestApi, its stage, deployment and every method in the API stack itself', () => {
    const inApp = (type: string) =>
      everyTemplate(app).flatMap((resources) => Object.values(resources).filter((resource) => resource.Type === type));
    for (const type of ['AWS::ApiGateway::RestApi', 'AWS::ApiGateway::Stage', 'AWS::ApiGateway::Deployment']) {
      expect(inApp(type), type).toHaveLength(1);
      expect(resourcesOf(app, type), type).toHaveLength(1);
    }
    expect(inApp('AWS::ApiGateway::Method')).toHaveLength(routes.length);
    expect(resourcesOf(app, 'AWS::ApiGateway::Method')).toHaveLength(routes.length);
    expect(inApp('AWS::ApiGateway::Resource')).toHaveLength(resourcesOf(app, 'AWS::ApiGateway::Resource').length);
  });

  it('deploys every method once each may invoke its function: the deployment depends on every method and route permission, the stage serves it', () => {
    const [[deploymentId, deployment]] = resourcesOf(app, 'AWS::ApiGateway::Deployment') as [[string, Resource]];
    const methodIds = resourcesOf(app, 'AWS::ApiGateway::Method').map(([id]) => id);
    expect(deployment.DependsOn).toEqual(expect.arrayContaining(methodIds));
    expect(deployment.DependsOn).toEqual(
      expect.arrayContaining(routes.map((route) => `${functionNameOf(route)}Permission`)),
    );
    const [[stageId, stage]] = resourcesOf(app, 'AWS::ApiGateway::Stage') as [[string, Resource]];
    expect(stage.Properties.DeploymentId).toEqual({ Ref: deploymentId });
    expect(logicalIdOf(app.api.api.restApi.deploymentStage)).toBe(stageId);
  });

  it("integrates each method with its route's function, read from its area's output, and lets only that method's stage path invoke it", () => {
    const resources = app.apiTemplate.toJSON().Resources as Record<string, Resource>;
    for (const route of routes) {
      const name = functionNameOf(route);
      const area = apiAreaStackId(apiAreaOf(route));
      const resource = app.api.api.restApi.root.resourceForPath(route.path);
      const method = resources[logicalIdOf(resource.node.findChild(route.method) as never)]!;
      const [, parts] = method.Properties.Integration.Uri['Fn::Join'] as [string, Array<Record<string, any>>];
      const arn = parts.find((part) => part['Fn::GetAtt'])!;
      expect(arn['Fn::GetAtt'][0]).toBe(area);
      const output = arn['Fn::GetAtt'][1].replace(/^Outputs\./, '');
      // The area's output is the function's ARN.
      expect(templateOf(app.api.areas[apiAreaOf(route)]!).toJSON().Outputs[output].Value).toEqual({
        'Fn::GetAtt': [functionLogicalId(name), 'Arn'],
      });
      // One permission for the function, `<Name>Permission`: this method, on the prod stage by its name (not a
      // reference to the stage, which would make it wait for the stage to serve the new deployment first).
      const permissions = Object.entries(resources).filter(
        ([, resource]) =>
          resource.Type === 'AWS::Lambda::Permission' &&
          JSON.stringify(resource.Properties.FunctionName) === JSON.stringify(arn),
      );
      expect(permissions.map(([id]) => id)).toEqual([`${name}Permission`]);
      const { SourceArn, Principal } = permissions[0]![1].Properties;
      expect(Principal).toBe('apigateway.amazonaws.com');
      const [, arnParts] = SourceArn['Fn::Join'] as [string, unknown[]];
      expect(arnParts.at(-2)).toEqual({ Ref: logicalIdOf(app.api.api.restApi) });
      expect(arnParts.at(-1)).toBe(`/prod/${route.method}${route.path.replace(/\{[^}]*\}/g, '*')}`);
    }
  });
});

describe('routes added later', () => {
  /** The new routes, each served by a small real handler. */
  const payerConnections: Route = {
    method: 'POST',
    path: '/api/external/v1.1/Payers/connections',
    handler: 'schemas/list-schemas',
  };
  const jwks: Route = {
    method: 'GET',
    path: '/api/external/v1.1/Payers/jwks/{keySetId}',
    handler: 'schemas/get-schema',
    auth: 'public',
  };
  const submit: Route = {
    method: 'POST',
    path: '/api/external/v1.1/Requests/{externalId}/submit',
    handler: 'schemas/validate-payload',
  };
  const synthesizeRoutes = (added: readonly Route[]) =>
    synthesize({ context: NO_BUNDLING, routes: added, eventFunctions: [] });
  let three: ReturnType<typeof synthesize>;
  let two: ReturnType<typeof synthesize>;
  let twoAgain: ReturnType<typeof synthesize>;
  beforeAll(() => {
    three = synthesizeRoutes([payerConnections, jwks, submit]);
    two = synthesizeRoutes([payerConnections, jwks]);
    twoAgain = synthesizeRoutes([payerConnections, jwks]);
  }, 180_000);
  afterAll(() => {
    for (const synthesized of [three, two, twoAgain]) synthesized?.cleanUp();
  });

  it('land in the area of their path, a new collection in a new one, with nothing listed by hand', () => {
    const stackOf = (name: string) => Stack.of(three.api.functions[name]!).node.id;
    expect(stackOf('ListSchemas')).toBe('PayersRoutes');
    expect(stackOf('GetSchema')).toBe('PayersRoutes');
    expect(stackOf('ValidatePayload')).toBe('RequestsRoutes');
    expect(Object.keys(three.api.areas).sort()).toEqual(['Payers', 'Requests']);
    expect(resourcesOf(three, 'AWS::ApiGateway::Method')).toHaveLength(3);
  });

  it('redeploy the stage: a route more is a new deployment (its logical id hashes every method), the same routes the same one', () => {
    const deploymentOf = (synthesized: ReturnType<typeof synthesize>) =>
      resourcesOf(synthesized, 'AWS::ApiGateway::Deployment').map(([id]) => id);
    expect(deploymentOf(three)).toHaveLength(1);
    expect(deploymentOf(three)).not.toEqual(deploymentOf(two));
    expect(deploymentOf(twoAgain)).toEqual(deploymentOf(two));
  });
});
