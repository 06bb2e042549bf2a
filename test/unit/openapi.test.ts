import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { asComponentSchema, buildOpenApiDocument } from '#lib/openapi/document';
import { operations } from '#lib/openapi/operations';
import { readRouteAsset } from '#lib/openapi/route-assets';
import { functionNameOf, type HandlerId, OPENAPI_DOCUMENT, routes } from '#lib/routes/route-table';
import { schemaSources } from '#lib/validation/schema-sources';

type Json = Record<string, any>;
const document: Json = JSON.parse(readRouteAsset(OPENAPI_DOCUMENT));
const operationOf = (route: (typeof routes)[number]): Json => document.paths[route.path][route.method.toLowerCase()];

/** What the handler module itself says of its body: the schema it validates with, multipart or not. */
const handlerBodyOf = (handler: string) => {
  const source = readFileSync(new URL(`../../functions/${handler}.ts`, import.meta.url), 'utf8');
  return {
    schema: /json: \{[^}]*validator: (\w+)Validator/.exec(source)?.[1]?.replace(/^./, (first) => first.toUpperCase()),
    json: /json: \{/.test(source),
    multipart: /multipart: multipartBody\(/.test(source),
  };
};

describe('the OpenAPI document', () => {
  it('is what the route table and the schemas make now (the build step ran)', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(document).toEqual(buildOpenApiDocument({ routes, schemaSources, version }));
  });

  it('is valid OpenAPI 3.1 for a real validator', async () => {
    const validator = new Validator();
    expect(await validator.validate(structuredClone(document))).toEqual({ valid: true });
    expect(validator.version).toBe('3.1');
  });

  it('has every route-table row, and nothing else', () => {
    const documented = Object.entries(document.paths as Json).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(routes.map((route) => `${route.method} ${route.path}`).sort());
    expect(Object.keys(operations).sort()).toEqual([...new Set(routes.map((route) => route.handler))].sort());
  });

  it.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', (_name, route) => {
    const operation = operationOf(route);
    expect(operation.operationId).toBe(functionNameOf(route));
    // Path parameters: exactly the template's variables, all required.
    const pathNames = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
    const pathParameters = (operation.parameters ?? []).filter((parameter: Json) => parameter.in === 'path');
    expect(pathParameters.map((parameter: Json) => parameter.name)).toEqual(pathNames);
    for (const parameter of pathParameters) expect(parameter.required).toBe(true);
    // The body: the schema the handler validates with, multipart where it takes a form.
    const body = handlerBodyOf(route.handler);
    const content = operation.requestBody?.content ?? {};
    // A merge patch is checked once merged (against Request): its body schema is derived from Request's. A FHIR
    // body (a payer's notification) is read by its handler, described by its own component, in both media types.
    const { mergePatch, fhir } = operations[route.handler]?.body ?? {};
    const bodySchema = mergePatch ? 'RequestMergePatch' : (fhir ?? body.schema);
    if (fhir) expect(content['application/fhir+json']?.schema?.$ref).toBe(`#/components/schemas/${fhir}`);
    expect(content['application/json']?.schema?.$ref).toBe(
      bodySchema ? `#/components/schemas/${bodySchema}` : undefined,
    );
    expect(content['application/json'] !== undefined).toBe(body.json);
    expect(content['multipart/form-data'] !== undefined).toBe(body.multipart);
    if (body.schema) {
      expect(operation.responses['400'].content['application/json'].schema.$ref).toBe(
        '#/components/schemas/ValidationResult',
      );
    }
    // Every failure is problem details.
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      if (Number(status) >= 400) {
        expect(response.content['application/problem+json'].schema.$ref).toBe('#/components/schemas/ProblemDetails');
      }
    }
    // Security: the key by default, none for the public description, the scraper token for the session.
    if (route.auth === 'public') expect(operation.security).toEqual([]);
    else if (route.auth === 'scraper-token') {
      expect(operation.security).toEqual([
        { scraperToken: [] },
        { scraperSessionCookie: [] },
        { scraperTokenQuery: [] },
      ]);
    } else expect(operation.security).toBeUndefined();
    // Obsolete routes: deprecated, and every answer of the handler says so in its headers (required on
    // success); the gateway's own refusals (401, 403, 429) cannot carry them, so they do not promise them.
    expect(operation.deprecated).toBe(route.successor ? true : undefined);
    if (route.successor) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const names = Object.keys(response.headers ?? {});
        if (['401', '403', '429'].includes(status)) expect(names).not.toContain('Deprecation');
        else expect(names).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
        if (Number(status) < 300) expect(response.headers.Deprecation.required).toBe(true);
      }
    }
    // Every 409 may say when to retry (concurrent writes kept winning, an Idempotency-Key still in flight).
    if (operation.responses['409']) expect(operation.responses['409'].headers['Retry-After']).toBeDefined();
    // Idempotent POSTs: a key reused with another body is a 422, one still in flight a 409 with Retry-After,
    // and a replay says so in Idempotent-Replayed.
    if (operations[route.handler]?.idempotent) {
      expect(operation.responses['422']).toBeDefined();
      expect(operation.responses['409'].headers['Retry-After']).toBeDefined();
      const success = Object.entries(operation.responses as Record<string, Json>).find(([status]) => status < '300');
      expect(success?.[1].headers['Idempotent-Replayed']).toMatchObject({ schema: { const: 'true' } });
    }
    // Path parameters carry the patterns the handlers check.
    for (const parameter of pathParameters)
      expect(parameter.schema.pattern ?? parameter.schema.maxLength).toBeDefined();
  });

  it('names ETag and Location where the handlers send them', () => {
    const byHandler = (handler: HandlerId) => operationOf(routes.find((route) => route.handler === handler)!);
    expect(Object.keys(byHandler('requests/get-request').responses['200'].headers)).toEqual(['ETag']);
    expect(Object.keys(byHandler('requests/get-request').responses['304'].headers)).toEqual(['ETag']);
    expect(Object.keys(byHandler('requests/create-request').responses['201'].headers)).toEqual([
      'ETag',
      'Location',
      'Idempotent-Replayed',
    ]);
    expect(byHandler('requests/create-request').responses['201'].headers.ETag.required).toBe(true);
    expect(Object.keys(byHandler('attachments/download-attachment').responses['303'].headers)).toEqual(['Location']);
    // A ?token= link: 303 to the session without it, with the session cookie.
    const session = byHandler('rpa/get-scraper-session');
    expect(Object.keys(session.responses['303'].headers)).toEqual(['Location', 'Set-Cookie']);
    expect(session.responses['303'].content).toBeUndefined();
    expect(document.components.securitySchemes.scraperSessionCookie).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'scraper_token',
    });
    expect(byHandler('requests/get-request').parameters.map((parameter: Json) => parameter.name)).toContain(
      'If-None-Match',
    );
    expect(byHandler('requests/create-request').parameters.map((parameter: Json) => parameter.name)).toContain(
      'Idempotency-Key',
    );
  });

  it('holds the very schemas the validators are compiled from, the Validation result and problem details', () => {
    const schemas = document.components.schemas;
    for (const [name, source] of Object.entries(schemaSources)) {
      expect(schemas[name]).toEqual(asComponentSchema(source));
    }
    expect(schemas.ValidationResult.required).toEqual(['succeeded', 'errors', 'type']);
    expect(schemas.ProblemDetails.required).toEqual(['type', 'title', 'status']);
    expect(document.components.securitySchemes.apiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    expect(document.security).toEqual([{ apiKey: [] }]);
    // The list route's query parameters are the members of the schema the handler checks them with.
    const list = operationOf(routes.find((route) => route.handler === 'portal-accounts/list-portal-accounts')!);
    expect(list.parameters.filter((parameter: Json) => parameter.in === 'query').map((p: Json) => p.name)).toEqual(
      Object.keys(schemaSources.PortalAccountListQuery.properties as Json),
    );
  });

  it('states our custom formats and the path parameters in standard JSON Schema, so other validators agree', () => {
    const npi = document.components.schemas.Request.properties.requestingProvider.properties.npi;
    expect(npi).toMatchObject({ format: 'npi', pattern: '^[0-9]{10}$', minLength: 10, maxLength: 10 });
    expect(npi.description).toMatch(/check digit/);
    const attachment = operationOf(routes.find((route) => route.handler === 'attachments/get-attachment')!);
    const schemaOf = (name: string) => attachment.parameters.find((parameter: Json) => parameter.name === name).schema;
    expect(new RegExp(schemaOf('externalId').pattern).test('bad id!')).toBe(false);
    expect(new RegExp(schemaOf('externalId').pattern).test('A-1')).toBe(true);
    expect(schemaOf('externalId').maxLength).toBe(64);
    expect(new RegExp(schemaOf('attachmentId').pattern).test('0e1b0a0c-7d3f-4c11-9a4e-5f3b2a1c0d9e')).toBe(true);
    expect(new RegExp(schemaOf('attachmentId').pattern).test('not-a-uuid')).toBe(false);
  });

  it('derives the merge patch from Request: every member optional, null removes it, objects merge', () => {
    const { RequestMergePatch: patch, Request: request } = document.components.schemas;
    expect(patch.required).toBeUndefined();
    expect(Object.keys(patch.properties)).toEqual(Object.keys(request.properties));
    expect(patch.properties.serviceTypeCode.anyOf).toEqual([request.properties.serviceTypeCode, { type: 'null' }]);
    const patient = patch.properties.patient.anyOf[0];
    expect(patient.required).toBeUndefined();
    expect(patient.additionalProperties).toBe(false);
    expect(patient.properties.memberId.anyOf[1]).toEqual({ type: 'null' });
  });

  it('says what the scraper session answers a browser: an HTML page, for 200 and 401', () => {
    const session = operationOf(routes.find((route) => route.handler === 'rpa/get-scraper-session')!);
    expect(Object.keys(session.responses['200'].content)).toEqual(['application/json', 'text/html']);
    expect(Object.keys(session.responses['401'].content)).toEqual(['application/problem+json', 'text/html']);
  });

  it('refuses a draft-07 keyword that OpenAPI 3.1 reads differently', () => {
    expect(() => asComponentSchema({ definitions: {} })).toThrow(/definitions/);
    expect(() => asComponentSchema({ properties: { a: { items: [{}] } } })).toThrow(/\/properties\/a\/items/);
  });
});
