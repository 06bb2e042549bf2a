import { SCRAPER_SESSION_COOKIE } from '#lib/http/scraper-credentials';
import { MAX_ERROR_TEXTS } from '#lib/validation/error-text';

export { rpaSchemas } from './rpa-schemas.ts';

/**
 * The shapes of the document that are not request bodies: responses, headers, security schemes.
 * Body schemas come from the validators' sources (document.ts); the representations below extend
 * them with what the service adds, so a field added to a body schema shows in its response too.
 */
type JsonSchema = Record<string, unknown>;

const timestamp = (description: string) => ({ type: 'string', format: 'date-time', description });
const nullable = (schema: JsonSchema) => ({ anyOf: [schema, { type: 'null' }] });

export const problemDetailsSchema: JsonSchema = {
  title: 'ProblemDetails',
  description:
    'RFC 9457 problem details (application/problem+json): every failure but a body that fails its schema. Extension members (limitBytes, accepted, position, maxDepth…) depend on the failure.',
  type: 'object',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string', const: 'about:blank' },
    title: { type: 'string', description: 'The status text, e.g. Not Found' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string', description: 'What went wrong, never quoting stored data' },
    requestId: { type: 'string', description: 'Quote it when reporting a problem' },
  },
  additionalProperties: true,
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

const authorization = {
  type: 'object',
  description: "The authorization's status as last read on the payer portal",
  properties: {
    status: { type: 'string', description: 'not_submitted until the automation read a status' },
    number: nullable({ type: 'string' }),
    decisionDate: nullable({ type: 'string', format: 'date' }),
    lastCheckedAt: nullable(timestamp('When the automation last read it')),
  },
};

/** A stored request as clients read it: the Request schema's members plus the service's. */
export const requestRepresentationOf = (requestSchema: JsonSchema): JsonSchema => ({
  title: 'RequestRepresentation',
  type: 'object',
  required: ['externalId', 'authorization', 'createdAt', 'updatedAt', 'version'],
  properties: {
    ...(requestSchema.properties as JsonSchema),
    authorization,
    createdAt: timestamp('When it was created'),
    updatedAt: timestamp('When it last changed'),
    version: { type: 'integer', minimum: 1, description: 'Also the ETag: "<version>"' },
  },
});

/** A portal account as clients read it: the PortalAccount schema's members but its secrets, plus the service's. */
export const portalAccountRepresentationOf = (portalAccountSchema: JsonSchema): JsonSchema => {
  const members = Object.entries(portalAccountSchema.properties as Record<string, JsonSchema>).filter(
    ([, schema]) => schema.writeOnly !== true,
  );
  return {
    title: 'PortalAccountRepresentation',
    description: 'Never a secret: only whether the password and the TOTP secret are set, and when they changed.',
    type: 'object',
    properties: {
      ...Object.fromEntries(members),
      organizationId: { type: 'string' },
      portalName: { type: 'string' },
      lastLogin: nullable(timestamp('Last login of the automation on the portal')),
      attention: nullable({
        type: 'object',
        description:
          'Set when the portal refused the credentials: the automation does not log in with this account again (runs end `account_needs_attention`) until new credentials are put or `status` is set to `active`.',
        required: ['reason', 'since'],
        properties: {
          reason: { type: 'string', enum: ['wrong_password', 'account_locked', 'mfa_required'] },
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
    },
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
  required: ['attachmentId', 'requestExternalId', 'fileName', 'contentType', 'status', 'createdAt', 'updatedAt'],
  properties: {
    attachmentId: { type: 'string', format: 'uuid' },
    requestExternalId: { type: 'string' },
    fileName: { type: 'string' },
    contentType: { type: 'string' },
    size: { type: 'integer', minimum: 0 },
    sha256: { type: 'string', description: 'Hex SHA-256 of the stored bytes' },
    documentType: { type: 'string' },
    description: { type: 'string' },
    status: { type: 'string', description: 'pending (presigned upload not yet received), stored, rejected…' },
    rejectionReason: { type: 'string' },
    uploadMethod: { type: 'string', enum: ['direct', 'presigned'] },
    upload: {
      type: 'object',
      description: 'Presigned uploads only: where and how to PUT the file',
      additionalProperties: true,
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
    file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file, at most 4 MiB' },
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
