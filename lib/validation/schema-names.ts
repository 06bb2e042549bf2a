/**
 * Schemas clients can read at /Schemas/{name} and validate against at /Schemas/{name}/validate.
 * Internal variants (e.g. a request addressed by its path) are compiled too but not listed.
 */
export const PUBLIC_SCHEMAS = [
  'Request',
  'PortalAccount',
  'PayerConnection',
  'RpaAccessRequest',
  'ViewOnPageRequest',
  'CheckAuthStatusBatch',
  'SubmitRequest',
  'CancelRequest',
] as const;
const INTERNAL_SCHEMAS = [
  'RequestAddressedByPath',
  'PortalAccountReplacement',
  'PortalAccountFilter',
  'PortalAccountListQuery',
  'PayerConnectionReplacement',
  'PayerConnectionListQuery',
  'PresignedUpload',
  'AuthorizationHistoryQuery',
  'WebhookSubscription',
  'WebhookDeliveryListQuery',
] as const;

export type PublicSchemaName = (typeof PUBLIC_SCHEMAS)[number];
export type SchemaName = PublicSchemaName | (typeof INTERNAL_SCHEMAS)[number];

export const isPublicSchemaName = (name: string): name is PublicSchemaName =>
  (PUBLIC_SCHEMAS as readonly string[]).includes(name);

/** A schema's validator module under lib/validation/generated/per-schema/: `RequestAddressedByPath` → `request-addressed-by-path`. */
export const validatorFileOf = (name: SchemaName): string => name.replace(/(?<!^)([A-Z])/g, '-$1').toLowerCase();

/** What that module exports: `RequestAddressedByPath` → `requestAddressedByPathValidator`. */
export const validatorExportOf = (name: SchemaName): string => `${name[0]!.toLowerCase()}${name.slice(1)}Validator`;
