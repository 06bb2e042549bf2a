import { ATTENTION_REASONS, LAST_LOGIN_RESULTS } from '#lib/entities/portal-account';
import { SCRAPER_SESSION_COOKIE } from '#lib/http/scraper-credentials';
import { MAX_ERROR_TEXTS } from '#lib/validation/error-text';
import { type JsonSchema, nullable, ref, timestamp } from './schema-builders.ts';

/**
 * The shapes of the document that are not request bodies: responses, headers, security schemes.
 * Body schemas come from the validators' sources (document.ts); the representations below extend
 * them with what the service adds, so a field added to a body schema shows in its response too.
 */

/**
 * Closed, so a typed client can tell it from a Validation result, and a member the server starts
 * sending without saying so fails the integration tests (test/support/openapi-conformance.ts).
 */
export const problemDetailsSchema: JsonSchema = {
  title: 'ProblemDetails',
  description:
    'RFC 9457 problem details (application/problem+json): every failure but a body that fails its schema. The extension members after `requestId` are present only where the failure has them.',
  type: 'object',
  required: ['type', 'title', 'status'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', const: 'about:blank' },
    title: { type: 'string', description: 'The status text, e.g. Not Found' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string', description: 'What went wrong, never quoting stored data' },
    requestId: { type: 'string', description: 'Quote it when reporting a problem' },
    parameter: { type: 'string', description: 'The path or query parameter at fault' },
    field: { type: 'string', description: 'The body or form field at fault' },
    header: { type: 'string', description: 'The header at fault' },
    reason: { type: 'string', description: 'Why, as a code (e.g. no_portal_account, sha256, content_mismatch)' },
    position: { type: 'integer', minimum: 0, description: 'A malformed JSON body: where in it (in characters)' },
    maxDepth: { type: 'integer', minimum: 1, description: 'A JSON body nested too deep: the limit' },
    limitBytes: { type: 'integer', minimum: 0, description: 'The size limit that was exceeded' },
    accepted: { type: 'array', items: { type: 'string' }, description: 'The media types accepted' },
    quota: { type: 'string', description: 'The quota used up (e.g. attachmentBytes, runsPerHour)' },
    limit: { type: 'integer', minimum: 0, description: "The quota's limit" },
    requestExternalId: { type: 'string', description: 'The request that cannot be automated (with reason)' },
    requestExternalIds: {
      type: 'array',
      items: { type: 'string' },
      description: 'check-auth-status: the requests not found (nothing was started)',
    },
    requests: {
      type: 'array',
      description: 'check-auth-status: the requests no portal account could be chosen for',
      items: {
        type: 'object',
        required: ['requestExternalId', 'reason'],
        additionalProperties: false,
        properties: { requestExternalId: { type: 'string' }, reason: { type: 'string' } },
      },
    },
    runId: { type: 'string', description: 'submit (reason submission_in_progress): the run under way' },
    attachmentIds: {
      type: 'array',
      items: { type: 'string' },
      description: 'submit (reason attachment_not_available): the attachments named that are not available',
    },
    problems: {
      type: 'array',
      items: ref('MappingProblem'),
      description:
        'submit (reason request_not_mappable): each field PAS cannot do without, with its path; nothing was sent',
    },
  },
};

export const validationResultSchema: JsonSchema = {
  title: 'ValidationResult',
  description:
    'The spec\'s Validation result: 400 for a body that fails its schema, 200 from …/validate. Each text reads `{valuePath}: {errorType} error for value "{value}". Message: {message}.` or `{valuePath}: {errorType} error. {message}.` (docs/validation.md).',
  type: 'object',
  required: ['succeeded', 'errors', 'type'],
  additionalProperties: false,
  properties: {
    succeeded: { type: 'boolean' },
    errors: { type: 'array', maxItems: MAX_ERROR_TEXTS + 1, items: { type: 'string' } },
    type: { type: 'string', const: 'none' },
  },
};

/** A stored request as clients read it: the Request schema's members plus the service's. */
export const requestRepresentationOf = (requestSchema: JsonSchema): JsonSchema => ({
  title: 'RequestRepresentation',
  type: 'object',
  // What Request requires is in every stored request (a merge patch's result is checked against it too).
  required: [
    ...new Set([...(requestSchema.required as string[]), 'authorization', 'createdAt', 'updatedAt', 'version']),
  ],
  properties: {
    ...(requestSchema.properties as JsonSchema),
    authorization: { $ref: '#/components/schemas/RequestAuthorization' },
    createdAt: timestamp('When it was created'),
    updatedAt: timestamp('When it last changed'),
    version: { type: 'integer', minimum: 1, description: 'Also the ETag: "<version>"' },
  },
  additionalProperties: false,
});

/** A portal account as clients read it: the PortalAccount schema's members but its secrets, plus the service's. */
export const portalAccountRepresentationOf = (portalAccountSchema: JsonSchema): JsonSchema => {
  const members = Object.entries(portalAccountSchema.properties as Record<string, JsonSchema>).filter(
    ([, schema]) => schema.writeOnly !== true,
  );
  const properties: JsonSchema = {
    ...Object.fromEntries(members),
    organizationId: { type: 'string' },
    portalName: { type: 'string' },
    lastLogin: nullable({
      type: 'object',
      description: "The automation's last login on the portal: how it went, and when",
      required: ['result', 'at'],
      additionalProperties: false,
      properties: { result: { type: 'string', enum: LAST_LOGIN_RESULTS }, at: timestamp('When it logged in') },
    }),
    attention: nullable({
      type: 'object',
      description:
        'Set when the portal refused the credentials: the automation does not log in with this account again (runs end `account_needs_attention`) until new credentials are put or `status` is set to `active`.',
      required: ['reason', 'since'],
      additionalProperties: false,
      properties: {
        reason: { type: 'string', enum: ATTENTION_REASONS },
        since: timestamp('When the portal refused them'),
      },
    }),
    passwordSet: { type: 'boolean', const: true },
    passwordChangedAt: timestamp('When the password was last set'),
    totpSecretSet: { type: 'boolean' },
    totpSecretChangedAt: nullable(timestamp('When the TOTP secret was last set')),
    createdAt: timestamp('When it was created'),
    updatedAt: timestamp('When it last changed'),
    version: { type: 'integer', minimum: 1, description: 'Also the ETag: "<version>"' },
  };
  return {
    title: 'PortalAccountRepresentation',
    description: 'Never a secret: only whether the password and the TOTP secret are set, and when they changed.',
    type: 'object',
    required: Object.keys(properties),
    additionalProperties: false,
    properties,
  };
};

export const portalAccountPageSchema: JsonSchema = {
  title: 'PortalAccountPage',
  type: 'object',
  required: ['items'],
  properties: {
    items: { type: 'array', items: { $ref: '#/components/schemas/PortalAccountRepresentation' } },
    nextCursor: nullable({ type: 'string', description: 'Signed; send it back as cursor for the next page' }),
  },
};

export const attachmentSchema: JsonSchema = {
  title: 'Attachment',
  description: 'Metadata of a clinical document; the file itself is read through …/download.',
  type: 'object',
  required: [
    'attachmentId',
    'requestExternalId',
    'fileName',
    'contentType',
    'size',
    'sha256',
    'status',
    'uploadMethod',
    'createdAt',
    'updatedAt',
  ],
  additionalProperties: false,
  properties: {
    attachmentId: { type: 'string', format: 'uuid' },
    requestExternalId: { type: 'string' },
    fileName: { type: 'string' },
    contentType: { type: 'string' },
    size: {
      type: 'integer',
      minimum: 0,
      description: 'Bytes: measured (direct) or declared (presigned, checked on arrival)',
    },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Hex SHA-256 of the stored bytes' },
    documentType: { type: 'string' },
    description: { type: 'string' },
    status: {
      type: 'string',
      enum: ['pending', 'available', 'rejected'],
      description: 'pending: a presigned upload not yet received and verified',
    },
    rejectionReason: { type: 'string', description: 'rejected only: why the file received was refused' },
    uploadMethod: { type: 'string', enum: ['direct', 'presigned'] },
    upload: {
      type: 'object',
      description: 'The answer to a presigned upload request only: where and how to PUT the file',
      required: ['method', 'url', 'headers', 'expiresAt'],
      additionalProperties: false,
      properties: {
        method: { type: 'string', const: 'PUT' },
        url: { type: 'string', format: 'uri', description: 'Presigned: PUT the file here' },
        headers: {
          type: 'object',
          description: 'Send these headers exactly as given: they are part of the signature',
          additionalProperties: { type: 'string' },
        },
        expiresAt: timestamp('When the URL stops working'),
      },
    },
    createdAt: timestamp('When it was created'),
    updatedAt: timestamp('When it last changed'),
    expiresAt: timestamp('pending only: when an upload not received is swept'),
  },
};

export const multipartUploadSchema: JsonSchema = {
  title: 'MultipartUpload',
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      type: 'string',
      format: 'binary',
      contentMediaType: 'application/octet-stream',
      description: 'The file, at most 4 MiB, sent with a filename',
    },
    documentType: { type: 'string' },
    description: { type: 'string' },
    sha256: { type: 'string', description: 'Hex SHA-256 of the file: checked when given' },
  },
};

export const schemaListSchema: JsonSchema = {
  title: 'SchemaList',
  type: 'object',
  required: ['schemas'],
  properties: {
    schemas: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'href', 'validate'],
        properties: { name: { type: 'string' }, href: { type: 'string' }, validate: { type: 'string' } },
      },
    },
  },
};

export const securitySchemes = {
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: "The client's API key (docs/security.md)" },
  scraperToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'The scraper token from POST …/rpa (15 minutes, and only while the API key that asked for it is active)',
  },
  scraperSessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: SCRAPER_SESSION_COOKIE,
    description: "The scraper token as the session's cookie, set by the 303 that answers a ?token= link",
  },
  scraperTokenQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'The scraper token in a link for a browser: exchanged for the session cookie (303)',
  },
} as const;

/**
 * RFC 7396 body of the v1 PATCH, derived from the Request schema: every member optional, `null`
 * removes it, objects merge member by member and arrays are replaced whole. The merged request must
 * still be a valid Request (400 Validation result otherwise).
 */
export const mergePatchOf = (schema: JsonSchema, title?: string): JsonSchema => {
  const { required: _required, anyOf: _anyOf, ...rest } = schema;
  const patched: JsonSchema =
    rest.type === 'object' && rest.properties
      ? {
          ...rest,
          properties: Object.fromEntries(
            Object.entries(rest.properties as Record<string, JsonSchema>).map(([name, member]) => [
              name,
              mergePatchOf(member),
            ]),
          ),
        }
      : rest;
  if (!title) return nullable(patched);
  return { ...patched, title, description: `RFC 7396 JSON Merge Patch of a ${schema.title}: null removes a member` };
};

export const jsonSchemaSchema: JsonSchema = {
  title: 'JsonSchema',
  type: 'object',
  description: 'A JSON Schema (draft-07), as the validators are compiled from it',
  required: ['$schema', '$id', 'title', 'type'],
  properties: {
    $schema: { type: 'string', const: 'http://json-schema.org/draft-07/schema#' },
    $id: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    type: { type: 'string', const: 'object' },
    required: { type: 'array', items: { type: 'string' } },
    properties: { type: 'object', additionalProperties: { type: 'object' } },
    additionalProperties: { type: 'boolean' },
  },
};

export const openApiDocumentSchema: JsonSchema = {
  title: 'OpenApiDocument',
  type: 'object',
  description: 'An OpenAPI 3.1 document: this one',
  required: ['openapi', 'info', 'paths', 'components'],
  properties: {
    openapi: { type: 'string', pattern: '^3\\.1\\.' },
    info: {
      type: 'object',
      required: ['title', 'version'],
      properties: { title: { type: 'string' }, version: { type: 'string' }, description: { type: 'string' } },
    },
    servers: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } } },
    tags: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
    paths: { type: 'object', additionalProperties: { type: 'object' } },
    webhooks: { type: 'object', additionalProperties: { type: 'object' } },
    components: {
      type: 'object',
      properties: { schemas: { type: 'object', additionalProperties: { type: 'object' } } },
    },
  },
};
