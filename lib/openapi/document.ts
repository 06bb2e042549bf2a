import { V1_PORTALS_DEPRECATION } from '#lib/http/deprecation';
import { IDEMPOTENCY_KEY_HEADER } from '#lib/http/idempotency';
import { SCRAPER_SESSION_COOKIE } from '#lib/http/scraper-credentials';
import type { Route } from '#lib/routes';
import { functionNameOf } from '#lib/routes';
import type { SchemaName } from '#lib/validation/schema-names';
import {
  attachmentSchema,
  multipartUploadSchema,
  portalAccountPageSchema,
  portalAccountRepresentationOf,
  problemDetailsSchema,
  requestRepresentationOf,
  rpaSchemas,
  schemaListSchema,
  securitySchemes,
  validationResultSchema,
} from './components.ts';
import { type OperationDoc, type Outcome, operations } from './operations.ts';
import { globalTagsOf } from './tags.ts';

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
    return out;
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
  409: 'Conflicts with the current state',
  412: 'If-Match does not hold: the resource changed',
  413: 'The body is too large',
  415: 'Unsupported Content-Type',
  422: 'Cannot be processed as it stands (`detail` and `reason` say why), or an Idempotency-Key reused with another body',
  429: 'Throttled: retry after Retry-After seconds',
  500: 'Unexpected error (logged)',
};

const HEADERS = {
  ETag: { description: 'The version, quoted: "<version>"', schema: { type: 'string' } },
  Location: { description: 'The URL of the resource', schema: { type: 'string' } },
  'Set-Cookie': {
    description: `The scraper session's cookie: ${SCRAPER_SESSION_COOKIE}=<accessToken>; Max-Age=<seconds the token has left>; Path=<this session's path>; HttpOnly; [Secure;] SameSite=Strict`,
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } },
};

const deprecationHeaders = (successor: string) => ({
  Deprecation: {
    description: `RFC 9745: deprecated since ${V1_PORTALS_DEPRECATION.deprecatedAt.toISOString().slice(0, 10)}, as @<unix seconds>`,
    schema: { type: 'string', example: `@${Math.floor(V1_PORTALS_DEPRECATION.deprecatedAt.getTime() / 1000)}` },
  },
  Sunset: {
    description: 'RFC 8594: when the route stops answering',
    schema: { type: 'string', example: V1_PORTALS_DEPRECATION.sunsetAt.toUTCString() },
  },
  Link: {
    description: 'RFC 5829: the successor, rel="successor-version"',
    schema: { type: 'string', example: `<${successor}>; rel="successor-version"` },
  },
});

/** The scraper session's credentials, any one of them: a bearer token, the session cookie, a `?token=` link. */
const SCRAPER_SESSION_SECURITY = [{ scraperToken: [] }, { scraperSessionCookie: [] }, { scraperTokenQuery: [] }];

const MEDIA_TYPES: Record<string, string> = { Html: 'text/html', JavaScript: 'text/javascript' };

const responseOf = (outcome: Outcome, extraHeaders: Json): Json => {
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
          },
        }),
  };
};

const requestBodyOf = (body: NonNullable<OperationDoc['body']>): Json => {
  const content: Json = {};
  if (body.schema) content['application/json'] = { schema: ref(body.schema) };
  if (body.anyJson) content['application/json'] = { schema: {} };
  if (body.mergePatch) {
    const patch = { schema: { type: 'object', description: 'RFC 7396 JSON Merge Patch of the Request' } };
    content['application/merge-patch+json'] = patch;
    content['application/json'] = patch;
  }
  if (body.multipart) content['multipart/form-data'] = { schema: ref('MultipartUpload') };
  return { required: !body.optional, content };
};

const pathNamesOf = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);

const operationOf = (route: Route, doc: OperationDoc, schemaSources: DocumentSources['schemaSources']): Json => {
  const parameters: Json[] = pathNamesOf(route.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    ...(doc.pathDescriptions?.[name] ? { description: doc.pathDescriptions[name] } : {}),
    schema: { type: 'string', minLength: 1 },
  }));
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
  const header = (name: string, description: string) => ({
    name,
    in: 'header',
    required: false,
    description,
    schema: { type: 'string' },
  });
  if (doc.ifMatch)
    parameters.push(header('If-Match', 'Write only if the resource still has this ETag (412 otherwise)'));
  if (doc.ifNoneMatch) parameters.push(header('If-None-Match', 'ETags the client holds: 304 when one is current'));
  if (doc.idempotent) {
    parameters.push(header(IDEMPOTENCY_KEY_HEADER, 'A retry with the same key and body gets the first response'));
  }

  const deprecation = route.successor ? deprecationHeaders(route.successor) : {};
  const responses: Json = {};
  for (const [status, outcome] of Object.entries(doc.outcomes)) responses[status] = responseOf(outcome, deprecation);
  const withDeprecation = (response: Json) =>
    route.successor ? { ...response, headers: { ...(response.headers as Json), ...deprecation } } : response;
  if (doc.body?.schema) {
    responses['400'] = withDeprecation({
      description: 'The body fails its schema (a Validation result), or is malformed (problem details)',
      content: {
        'application/json': { schema: ref('ValidationResult') },
        [PROBLEM]: { schema: ref('ProblemDetails') },
      },
    });
  } else if (doc.querySchema) {
    responses['400'] = withDeprecation({
      description: 'A query parameter fails its schema (a Validation result), or the URL is malformed',
      content: {
        'application/json': { schema: ref('ValidationResult') },
        [PROBLEM]: { schema: ref('ProblemDetails') },
      },
    });
  }
  const statuses = new Set([400, ...(doc.failures ?? []), 429, 500]);
  if (route.auth !== 'public') statuses.add(401).add(403);
  if (doc.body) statuses.add(413).add(415);
  for (const status of [...statuses].sort()) {
    if (responses[status]) continue;
    const response = problem(FAILURES[status] ?? 'Failure');
    responses[status] = withDeprecation(
      status === 429 ? { ...response, headers: { 'Retry-After': HEADERS['Retry-After'] } } : response,
    );
  }

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
    responses,
  };
};

export const buildOpenApiDocument = ({ routes, schemaSources, version }: DocumentSources): Json => {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const doc = operations[route.handler];
    if (!doc) throw new Error(`lib/openapi/operations.ts does not describe ${route.handler}`);
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operationOf(route, doc, schemaSources);
  }
  const bodySchemas = Object.fromEntries(
    Object.entries(schemaSources).map(([name, schema]) => [name, asComponentSchema(schema)]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Service review API',
      version,
      description:
        'Prior authorizations ("service reviews"): requests, clinical attachments, payer-portal accounts and the automation that reads authorization statuses. Every call but this description and the scraper session needs an x-api-key. Generated from the route table and the JSON Schemas the validators are compiled from.',
    },
    servers: [{ url: '/', description: 'This API (paths start with /api/external)' }],
    security: [{ apiKey: [] }],
    tags: globalTagsOf(paths),
    paths,
    components: {
      securitySchemes,
      schemas: {
        ...bodySchemas,
        RequestRepresentation: requestRepresentationOf(bodySchemas.Request!),
        PortalAccountRepresentation: portalAccountRepresentationOf(bodySchemas.PortalAccount!),
        PortalAccountPage: portalAccountPageSchema,
        Attachment: attachmentSchema,
        AttachmentList: {
          title: 'AttachmentList',
          type: 'object',
          required: ['attachments'],
          properties: { attachments: { type: 'array', items: ref('Attachment') } },
        },
        MultipartUpload: multipartUploadSchema,
        ...rpaSchemas,
        SchemaList: schemaListSchema,
        JsonSchema: { title: 'JsonSchema', type: 'object', description: 'A JSON Schema (draft-07)' },
        OpenApiDocument: { title: 'OpenApiDocument', type: 'object', description: 'An OpenAPI 3.1 document' },
        ValidationResult: validationResultSchema,
        ProblemDetails: problemDetailsSchema,
      },
    },
  };
};
