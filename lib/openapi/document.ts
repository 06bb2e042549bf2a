import { eventSchemas } from '#lib/events/event-schemas';
import { V1_PORTALS_DEPRECATION } from '#lib/http/deprecation';
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from '#lib/http/idempotency';
import { UUID_PATTERN } from '#lib/http/path';
import { SCRAPER_SESSION_COOKIE } from '#lib/http/scraper-credentials';
import { KEY_SET_ID_PATTERN } from '#lib/payer-api/signing-keys/key-set-id';
import { SUBSCRIPTION_ID_PATTERN } from '#lib/payer-subscriptions/notification-limits';
import { functionNameOf, type Route } from '#lib/routes/route-table';
import type { SchemaName } from '#lib/validation/schema-names';
import { ID_MAX_LENGTH, ID_PATTERN } from '#lib/validation/schemas/common';
import { authorizationHistorySchemas } from './authorization-history-schemas.ts';
import {
  attachmentSchema,
  jsonSchemaSchema,
  mergePatchOf,
  multipartUploadSchema,
  openApiDocumentSchema,
  portalAccountPageSchema,
  portalAccountRepresentationOf,
  problemDetailsSchema,
  requestRepresentationOf,
  schemaListSchema,
  securitySchemes,
  validationResultSchema,
} from './components.ts';
import type { OperationDoc, Outcome } from './operation-doc.ts';
import { operations } from './operations.ts';
import { payerConnectionSchemasOf } from './payer-connection-schemas.ts';
import { payerJwksSchemas } from './payer-jwks-schemas.ts';
import { payerNotificationSchemas } from './payer-notification-schemas.ts';
import { rpaSchemas } from './rpa-schemas.ts';
import { globalTagsOf } from './tags.ts';
import { webhookSchemas } from './webhook-schemas.ts';
import { webhooksOf } from './webhooks.ts';

/**
 * The OpenAPI 3.1 document, built from the route table (paths, methods, path parameters, security,
 * deprecation) and the JSON Schemas the validators are compiled from (request bodies, query
 * parameters), plus operations.ts for what a row does not say. Run at build time by
 * scripts/build-openapi.ts (the schema sources read code sets from files); handlers serve the result.
 */
type Json = Record<string, unknown>;

export interface DocumentSources {
  routes: readonly Route[];
  schemaSources: Record<SchemaName, Json>;
  version: string;
}

const DRAFT_07_ONLY = ['definitions', 'dependencies', 'additionalItems'];

/**
 * Our custom formats (lib/validation/formats.ts), as far as standard JSON Schema can say them: other
 * validators ignore an unknown format, so the document adds what they can check. The check digit
 * stays in the description (and in our validators).
 */
const PORTABLE_FORMATS: Record<string, Json> = { npi: { pattern: '^[0-9]{10}$', minLength: 10, maxLength: 10 } };

/**
 * A validator's schema (draft-07) as an OpenAPI 3.1 schema (2020-12): without `$schema` and `$id`
 * (the component's name identifies it). The keywords whose meaning changed in 2020-12 are refused,
 * so a schema that starts using one is noticed here rather than misdocumented.
 */
export const asComponentSchema = (schema: Json): Json => {
  const visit = (value: unknown, path: string): unknown => {
    if (Array.isArray(value)) return value.map((item, i) => visit(item, `${path}/${i}`));
    if (value === null || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [key, member] of Object.entries(value)) {
      if (DRAFT_07_ONLY.includes(key) || (key === 'items' && Array.isArray(member))) {
        throw new Error(`${path}/${key}: a draft-07 keyword OpenAPI 3.1 reads differently; convert it here`);
      }
      out[key] = visit(member, `${path}/${key}`);
    }
    const portable = typeof out.format === 'string' ? PORTABLE_FORMATS[out.format] : undefined;
    return portable ? { ...out, ...portable } : out;
  };
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return visit(rest, '') as Json;
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const PROBLEM = 'application/problem+json';
const problem = (description: string) => ({ description, content: { [PROBLEM]: { schema: ref('ProblemDetails') } } });

/** What a status means where the operation does not say more. */
const FAILURES: Record<number, string> = {
  400: 'Bad input: problem details (a malformed body, URL or parameter)',
  401: 'No valid credential',
  403: 'This API key may not call this endpoint',
  404: "Not found (another client's ids included)",
  409: 'Conflicts with the current state (Retry-After when concurrent writes kept winning: the same request may then pass)',
  412: 'If-Match does not hold: the resource changed',
  413: 'The body is too large',
  415: 'Unsupported Content-Type',
  422: 'Cannot be processed as it stands (`detail` and `reason` say why), or an Idempotency-Key reused with another body',
  429: 'Throttled: retry after Retry-After seconds',
  500: 'Unexpected error (logged)',
};

const HEADERS = {
  ETag: { description: 'The version, quoted: "<version>"', required: true, schema: { type: 'string' } },
  Location: { description: 'The URL of the resource', required: true, schema: { type: 'string' } },
  'Set-Cookie': {
    description: `The scraper session's cookie: ${SCRAPER_SESSION_COOKIE}=<accessToken>; Max-Age=<seconds the token has left>; Path=<this session's path>; HttpOnly; [Secure;] SameSite=Strict`,
    required: true,
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description: 'How long the answer may be cached: public, max-age=<seconds>',
    required: true,
    schema: { type: 'string', pattern: '^public, max-age=[0-9]+$' },
  },
  'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer', minimum: 1 } },
  [REPLAYED_HEADER]: {
    description: 'true: a retry with the same Idempotency-Key and body, answered with the first response',
    schema: { type: 'string', const: 'true' },
  },
};

/** Sent by the handler on every answer of an obsolete route (not by the gateway: its 401, 403 and 429 have none). */
const deprecationHeaders = (successor: string, required: boolean) => ({
  Deprecation: {
    required,
    description: `RFC 9745: deprecated since ${V1_PORTALS_DEPRECATION.deprecatedAt.toISOString().slice(0, 10)}, as @<unix seconds>`,
    schema: { type: 'string', example: `@${Math.floor(V1_PORTALS_DEPRECATION.deprecatedAt.getTime() / 1000)}` },
  },
  Sunset: {
    required,
    description: 'RFC 8594: when the route stops answering',
    schema: { type: 'string', example: V1_PORTALS_DEPRECATION.sunsetAt.toUTCString() },
  },
  Link: {
    required,
    description: 'RFC 5829: the successor, rel="successor-version"',
    schema: { type: 'string', example: `<${successor}>; rel="successor-version"` },
  },
});

/** The scraper session's credentials, any one of them: a bearer token, the session cookie, a `?token=` link. */
const SCRAPER_SESSION_SECURITY = [{ scraperToken: [] }, { scraperSessionCookie: [] }, { scraperTokenQuery: [] }];

const MEDIA_TYPES: Record<string, string> = { Html: 'text/html', JavaScript: 'text/javascript' };
const HTML_PAGE = {
  'text/html': { schema: { type: 'string', description: 'A page for a browser (Accept: text/html)' } },
};

const responseOf = (outcome: Outcome, extraHeaders: Json, browserPage: boolean): Json => {
  const headers = {
    ...Object.fromEntries((outcome.headers ?? []).map((name) => [name, HEADERS[name]])),
    ...extraHeaders,
  };
  const mediaType = outcome.mediaType ?? MEDIA_TYPES[outcome.body] ?? 'application/json';
  return {
    description: outcome.description,
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(outcome.body === 'none'
      ? {}
      : {
          content: {
            [mediaType]: { schema: MEDIA_TYPES[outcome.body] ? { type: 'string' } : ref(outcome.body) },
            ...(browserPage ? HTML_PAGE : {}),
          },
        }),
  };
};

const requestBodyOf = (body: NonNullable<OperationDoc['body']>): Json => {
  const content: Json = {};
  if (body.schema) content['application/json'] = { schema: ref(body.schema) };
  if (body.anyJson) content['application/json'] = { schema: {} };
  if (body.mergePatch) {
    content['application/merge-patch+json'] = { schema: ref('RequestMergePatch') };
    content['application/json'] = { schema: ref('RequestMergePatch') };
  }
  if (body.multipart) content['multipart/form-data'] = { schema: ref('MultipartUpload') };
  if (body.fhir) {
    content['application/fhir+json'] = { schema: ref(body.fhir) };
    content['application/json'] = { schema: ref(body.fhir) };
  }
  return { required: !body.optional, content };
};

const pathNamesOf = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);

/** What the handlers accept in each path parameter (lib/http/path.ts): anything else is a 400. */
const CLIENT_ID = { type: 'string', minLength: 1, maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN };
const OUR_ID = { type: 'string', format: 'uuid', pattern: UUID_PATTERN };
const PATH_PARAMETER_SCHEMAS: Record<string, Json> = {
  externalId: CLIENT_ID,
  appointmentId: CLIENT_ID,
  requestExternalId: CLIENT_ID,
  attachmentId: OUR_ID,
  runId: OUR_ID,
  batchId: OUR_ID,
  webhookId: OUR_ID,
  deliveryId: OUR_ID,
  subscriptionId: {
    type: 'string',
    pattern: SUBSCRIPTION_ID_PATTERN,
    description: 'Our id of the PAS subscription, as the notification URL given to the payer names it',
  },
  keySetId: {
    type: 'string',
    pattern: KEY_SET_ID_PATTERN,
    description: "The public id of an API client's key set, as its jwksUri names it",
  },
  name: { type: 'string', minLength: 1, maxLength: 64, description: 'A name listed by GET …/Schemas' },
};

const header = (name: string, description: string) => ({
  name,
  in: 'header',
  required: false,
  description,
  schema: { type: 'string' },
});

const parametersOf = (route: Route, doc: OperationDoc, schemaSources: DocumentSources['schemaSources']): Json[] => {
  const parameters: Json[] = pathNamesOf(route.path).map((name) => {
    const schema = PATH_PARAMETER_SCHEMAS[name];
    if (!schema) throw new Error(`${route.path}: say in PATH_PARAMETER_SCHEMAS what {${name}} accepts`);
    return {
      name,
      in: 'path',
      required: true,
      ...(doc.pathDescriptions?.[name] ? { description: doc.pathDescriptions[name] } : {}),
      schema,
    };
  });
  if (doc.querySchema) {
    const query = schemaSources[doc.querySchema];
    const required = (query.required as string[] | undefined) ?? [];
    for (const [name, schema] of Object.entries(query.properties as Record<string, Json>)) {
      parameters.push({ name, in: 'query', required: required.includes(name), schema: asComponentSchema(schema) });
    }
  }
  for (const [name, description] of Object.entries(doc.query ?? {})) {
    parameters.push({ name, in: 'query', required: false, description, schema: { type: 'string' } });
  }
  if (doc.ifMatch)
    parameters.push(header('If-Match', 'Write only if the resource still has this ETag (412 otherwise)'));
  if (doc.ifNoneMatch) parameters.push(header('If-None-Match', 'ETags the client holds: 304 when one is current'));
  if (doc.idempotent) {
    parameters.push(header(IDEMPOTENCY_KEY_HEADER, 'A retry with the same key and body gets the first response'));
  }
  return parameters;
};

/** Statuses only the gateway answers (the authorizer, the throttle): no handler header is on them. */
const GATEWAY_ONLY = new Set([401, 403, 429]);

const validationFailure = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('ValidationResult') }, [PROBLEM]: { schema: ref('ProblemDetails') } },
});

const failureOf = (status: number, doc: OperationDoc, browserPage: boolean): Json => {
  const response: Json = problem(FAILURES[status] ?? 'Failure');
  if (status === 429) return { ...response, headers: { 'Retry-After': HEADERS['Retry-After'] } };
  if (status === 409) {
    const description = doc.idempotent
      ? `${FAILURES[409]}, or a request with this Idempotency-Key still in progress (retry after Retry-After)`
      : FAILURES[409];
    return { ...response, description, headers: { 'Retry-After': HEADERS['Retry-After'] } };
  }
  if (status === 401 && browserPage) {
    const description = `${FAILURES[401]}; a browser arriving from another site's link gets a page that reloads itself once`;
    return { ...response, description, content: { ...(response.content as Json), ...HTML_PAGE } };
  }
  return response;
};

const responsesOf = (route: Route, doc: OperationDoc): Json => {
  const browserPage = doc.browserPage === true;
  const handlerHeaders = (required: boolean): Json => ({
    ...(route.successor ? deprecationHeaders(route.successor, required) : {}),
  });
  const responses: Json = {};
  for (const [status, outcome] of Object.entries(doc.outcomes)) {
    const replayed = doc.idempotent ? { [REPLAYED_HEADER]: HEADERS[REPLAYED_HEADER] } : {};
    responses[status] = responseOf(outcome, { ...replayed, ...handlerHeaders(true) }, browserPage);
  }
  if (doc.body?.schema || doc.body?.mergePatch) {
    responses['400'] = validationFailure(
      'The body fails its schema (a Validation result), or is malformed (problem details)',
    );
  } else if (doc.querySchema) {
    responses['400'] = validationFailure(
      'A query parameter fails its schema (a Validation result), or the URL is malformed',
    );
  }
  const statuses = new Set([400, ...(doc.failures ?? []), 429, 500]);
  if (route.auth !== 'public') statuses.add(401).add(403);
  if (doc.body) statuses.add(413).add(415);
  if (doc.idempotent) statuses.add(409).add(422);
  for (const status of [...statuses].sort()) responses[status] ??= failureOf(status, doc, browserPage);
  for (const status of Object.keys(responses).map(Number)) {
    const response = responses[status] as Json;
    if (status < 400 || GATEWAY_ONLY.has(status) || !route.successor) continue;
    // The handler's failures carry them; the gateway's (a 413 of its own, a 500 of the authorizer) do not.
    responses[status] = { ...response, headers: { ...(response.headers as Json), ...handlerHeaders(false) } };
  }
  return responses;
};

const operationOf = (route: Route, doc: OperationDoc, schemaSources: DocumentSources['schemaSources']): Json => {
  const parameters = parametersOf(route, doc, schemaSources);
  return {
    operationId: functionNameOf(route),
    summary: doc.summary,
    ...(doc.description || route.successor
      ? {
          description: [doc.description, route.successor && `Obsolete: use ${route.successor}.`]
            .filter(Boolean)
            .join(' '),
        }
      : {}),
    tags: [route.successor ? `${doc.tag} (v1, obsolete)` : doc.tag],
    ...(route.successor ? { deprecated: true } : {}),
    ...(route.auth === 'public' ? { security: [] } : {}),
    ...(route.auth === 'scraper-token' ? { security: SCRAPER_SESSION_SECURITY } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(doc.body ? { requestBody: requestBodyOf(doc.body) } : {}),
    responses: responsesOf(route, doc),
  };
};

export const buildOpenApiDocument = ({ routes, schemaSources, version }: DocumentSources): Json => {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const doc = operations[route.handler];
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operationOf(route, doc, schemaSources);
  }
  const webhooks = webhooksOf();
  const bodySchemas = Object.fromEntries(
    Object.entries(schemaSources).map(([name, schema]) => [name, asComponentSchema(schema)]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Service review API',
      version,
      description:
        'Prior authorizations ("service reviews"): requests, clinical attachments, payer-portal accounts, payer API connections and the automation that reads authorization statuses. Every call but this description and the scraper session needs an x-api-key. Generated from the route table and the JSON Schemas the validators are compiled from.',
    },
    servers: [{ url: '/', description: 'This API (paths start with /api/external)' }],
    security: [{ apiKey: [] }],
    tags: globalTagsOf({ ...paths, ...webhooks }),
    paths,
    webhooks,
    components: {
      securitySchemes,
      schemas: {
        ...bodySchemas,
        RequestRepresentation: requestRepresentationOf(bodySchemas.Request!),
        RequestMergePatch: mergePatchOf(bodySchemas.Request!, 'RequestMergePatch'),
        PortalAccountRepresentation: portalAccountRepresentationOf(bodySchemas.PortalAccount!),
        PortalAccountPage: portalAccountPageSchema,
        ...payerConnectionSchemasOf(bodySchemas.PayerConnection!),
        Attachment: attachmentSchema,
        AttachmentList: {
          title: 'AttachmentList',
          type: 'object',
          required: ['attachments'],
          properties: { attachments: { type: 'array', items: ref('Attachment') } },
        },
        MultipartUpload: multipartUploadSchema,
        ...authorizationHistorySchemas,
        ...rpaSchemas,
        ...eventSchemas,
        ...webhookSchemas,
        ...payerJwksSchemas,
        ...payerNotificationSchemas,
        SchemaList: schemaListSchema,
        JsonSchema: jsonSchemaSchema,
        OpenApiDocument: openApiDocumentSchema,
        ValidationResult: validationResultSchema,
        ProblemDetails: problemDetailsSchema,
      },
    },
  };
};
