import type { HandlerId } from '#lib/routes/route-table';
import type { Header, OperationDoc, Outcome } from './operation-doc.ts';
import { payerApiOperations } from './payer-api-operations.ts';
import { payerConnectionOperations } from './payer-connection-operations.ts';

/**
 * What the document says of each route beyond its row (./operation-doc.ts), keyed by the row's handler
 * id: one handler serves both the v1.1 and the obsolete v1 Portals path, and a route left undescribed
 * does not compile. Body schemas are the names the handlers validate with (test/unit/openapi.test.ts
 * reads them from the handlers); everything else (paths, methods, parameters, security, deprecation)
 * comes from the route table itself.
 */

const REQUEST_PATH = { externalId: "The request's externalId" };
const ACCOUNT_PATH = { externalId: "The portal account's externalId" };

const request = (description: string, status = 200): Record<number, Outcome> => ({
  [status]: { description, body: 'RequestRepresentation', headers: ['ETag'] },
});
const account = (description: string, status = 200, headers: readonly Header[] = ['ETag']) => ({
  [status]: { description, body: 'PortalAccountRepresentation', headers },
});
const notModified: Record<number, Outcome> = {
  304: { description: 'If-None-Match holds: the client’s copy is current', body: 'none', headers: ['ETag'] },
};

export const operations: Record<HandlerId, OperationDoc> = {
  'requests/upsert-request-v1': {
    summary: 'Create or replace a request (v1)',
    tag: 'Requests',
    description:
      'Creates the request under this id (201) or replaces it whole (200); If-Match makes a replace conditional.',
    body: { schema: 'RequestAddressedByPath' },
    pathDescriptions: { appointmentId: "The request's id (the same as v1.1's externalId)" },
    ifMatch: true,
    outcomes: { ...request('Replaced'), ...request('Created', 201) },
    failures: [404, 409, 412],
  },
  'requests/patch-request-v1': {
    summary: 'Change a request with a JSON Merge Patch (v1)',
    tag: 'Requests',
    description: 'RFC 7396: the merged request is validated against the Request schema.',
    body: { mergePatch: true },
    pathDescriptions: { appointmentId: "The request's id (the same as v1.1's externalId)" },
    ifMatch: true,
    outcomes: request('The merged request'),
    failures: [404, 409, 412],
  },
  'requests/create-request': {
    summary: 'Create a request',
    tag: 'Requests',
    description:
      "The body's `externalId` names the request: 409 if it exists already. An Idempotency-Key makes a retry safe.",
    body: { schema: 'Request' },
    idempotent: true,
    outcomes: { 201: { description: 'Created', body: 'RequestRepresentation', headers: ['ETag', 'Location'] } },
    failures: [409, 422],
  },
  'requests/replace-request': {
    summary: 'Replace a request',
    tag: 'Requests',
    description: 'Replaces every field of an existing request (404 if there is none); If-Match makes it conditional.',
    body: { schema: 'RequestAddressedByPath' },
    pathDescriptions: REQUEST_PATH,
    ifMatch: true,
    outcomes: request('Replaced'),
    failures: [404, 409, 412],
  },
  'requests/get-request': {
    summary: 'Read a request with its authorization status',
    tag: 'Requests',
    description:
      'The request as stored, with `authorization` (the status last read on the payer portal); its version is the ETag.',
    pathDescriptions: REQUEST_PATH,
    ifNoneMatch: true,
    outcomes: { ...request('The request'), ...notModified },
    failures: [404],
  },
  'requests/get-authorization-history': {
    summary: "Read a request's authorization history",
    tag: 'Requests',
    description:
      'Every change of its status, number or decision date, newest first, with what changed it (the run, or the API call); pages of `pageSize` (1–100, default 25), `nextCursor` asks for the next one.',
    pathDescriptions: REQUEST_PATH,
    querySchema: 'AuthorizationHistoryQuery',
    outcomes: { 200: { description: 'A page, newest first', body: 'AuthorizationHistoryPage' } },
    failures: [404],
  },
  'attachments/create-attachment': {
    summary: 'Upload an attachment, or ask for a presigned upload',
    tag: 'Attachments',
    description:
      'multipart/form-data: the file (at most 4 MiB) in the field `file`. JSON: a presigned upload (at most 1 GiB), answered with where to PUT the file.',
    body: { schema: 'PresignedUpload', multipart: true },
    pathDescriptions: REQUEST_PATH,
    idempotent: true,
    outcomes: { 201: { description: 'Created', body: 'Attachment', headers: ['Location'] } },
    failures: [404, 409, 422],
  },
  'attachments/list-attachments': {
    summary: "List a request's attachments",
    tag: 'Attachments',
    description: 'Every attachment of the request, with its metadata (not its content: download it).',
    pathDescriptions: REQUEST_PATH,
    outcomes: { 200: { description: 'The attachments', body: 'AttachmentList' } },
    failures: [404],
  },
  'attachments/get-attachment': {
    summary: "Read an attachment's metadata",
    tag: 'Attachments',
    description: 'Name, media type, size, SHA-256, status and timestamps; not the content (download it).',
    pathDescriptions: REQUEST_PATH,
    outcomes: { 200: { description: 'The metadata', body: 'Attachment' } },
    failures: [404],
  },
  'attachments/download-attachment': {
    summary: 'Download an attachment',
    tag: 'Attachments',
    description:
      'A 303 to a presigned URL, valid 60 seconds, of exactly the bytes stored; 409 for an attachment that has none (pending or rejected).',
    pathDescriptions: REQUEST_PATH,
    outcomes: {
      303: {
        description: 'Location: a 60-second presigned URL of the exact bytes',
        body: 'none',
        headers: ['Location'],
      },
    },
    failures: [404, 409],
  },
  'attachments/delete-attachment': {
    summary: 'Delete an attachment permanently',
    tag: 'Attachments',
    description: 'Removes the file, every version of it, and its metadata, permanently.',
    pathDescriptions: REQUEST_PATH,
    outcomes: { 204: { description: 'Deleted, every version of the file', body: 'none' } },
    failures: [404, 409],
  },
  'portal-accounts/create-portal-account': {
    summary: 'Create a portal account',
    tag: 'Portal accounts',
    description: 'The password and TOTP secret are envelope-encrypted and never returned.',
    body: { schema: 'PortalAccount' },
    idempotent: true,
    outcomes: account('Created', 201, ['ETag', 'Location']),
    failures: [404, 409],
  },
  'portal-accounts/list-portal-accounts': {
    summary: "List the portal accounts of a client user's organization",
    tag: 'Portal accounts',
    description:
      "Pages of `pageSize` accounts (1–100, default 25), oldest first; a page's `nextCursor` asks for the next one.",
    pathDescriptions: { externalId: 'The clientUserId whose organization’s accounts are listed' },
    querySchema: 'PortalAccountListQuery',
    outcomes: { 200: { description: 'A page, oldest first', body: 'PortalAccountPage' } },
    failures: [404],
  },
  'portal-accounts/get-portal-account': {
    summary: 'Read a portal account',
    tag: 'Portal accounts',
    description: 'The account without its secrets; its version is the ETag.',
    pathDescriptions: ACCOUNT_PATH,
    ifNoneMatch: true,
    outcomes: { ...account('The account'), ...notModified },
    failures: [404],
  },
  'portal-accounts/replace-portal-account': {
    summary: 'Replace a portal account',
    tag: 'Portal accounts',
    description:
      'Replaces every field but the secrets: one left out stays as it is, `totpSecret: null` removes the TOTP secret. If-Match (or `version`) refuses a stale write.',
    body: { schema: 'PortalAccountReplacement' },
    pathDescriptions: ACCOUNT_PATH,
    ifMatch: true,
    outcomes: account('Replaced'),
    failures: [404, 409, 412],
  },
  'portal-accounts/delete-portal-account': {
    summary: 'Delete a portal account',
    tag: 'Portal accounts',
    description: 'Removes the account and its encrypted secrets permanently; If-Match makes it conditional.',
    pathDescriptions: ACCOUNT_PATH,
    ifMatch: true,
    outcomes: { 204: { description: 'Deleted', body: 'none' } },
    failures: [404, 412],
  },
  'portal-accounts/filter-portal-accounts': {
    summary: 'Filter portal accounts',
    tag: 'Portal accounts',
    description: 'By portal, payer, status and free text (display name or username), with signed cursors.',
    body: { schema: 'PortalAccountFilter' },
    outcomes: { 200: { description: 'A page, oldest first', body: 'PortalAccountPage' } },
    failures: [404],
  },
  ...payerConnectionOperations,
  ...payerApiOperations,
  'rpa/issue-rpa-access-token': {
    summary: 'Issue a scraper token for a request',
    tag: 'Service-review automation',
    description:
      "A 15-minute token for the request's scraper session, and the session's URL; the token works only while this API key does.",
    body: { schema: 'RpaAccessRequest', optional: true },
    outcomes: { 200: { description: 'The token and the session URL', body: 'RpaAccessToken' } },
    failures: [404],
  },
  'rpa/get-scraper-session': {
    summary: 'Read the scraper session',
    tag: 'Service-review automation',
    description:
      "Authenticated by the scraper token, not by an API key: Authorization: Bearer (wins), else the session cookie. A browser opens scraperUri?token=<accessToken>: the link is exchanged for the session cookie (303 to the same URL without the token; HttpOnly, SameSite=Strict, scoped to this session's path, Secure on https, Max-Age at most the token's remaining life). JSON, or an HTML page for a browser (Accept: text/html); a browser arriving from another site's link without the cookie gets a 401 page that reloads itself once. A token stops working when the API key that asked for it is revoked or expires, or its client is deleted.",
    query: { token: "A link's scraper token: exchanged for the session cookie (303 to the URL without it)" },
    browserPage: true,
    outcomes: {
      200: {
        description:
          "The request's authorization and its latest changes; the latest runs, steps, values entered and screenshots",
        body: 'ScraperSession',
      },
      303: {
        description: 'A ?token= link: the session cookie is set, and the browser sent to the URL without the token',
        body: 'none',
        headers: ['Location', 'Set-Cookie'],
      },
    },
    failures: [404],
  },
  'rpa/start-view-on-page': {
    summary: "Fill the payer portal's form, stopping before submitting",
    tag: 'Service-review automation',
    body: { schema: 'ViewOnPageRequest', optional: true },
    idempotent: true,
    description:
      "The portal account: `portalAccountExternalId` when given (404 if it is not the client user's organization's, 422 if it is disabled or on a portal the automation does not drive); else the organization's oldest active account serving the request's `patient.PayerId`; else its only active account. When none can be chosen: 422 with `reason`.",
    outcomes: { 202: { description: 'The run is queued', body: 'RunStarted', headers: ['Location'] } },
    failures: [404, 409, 422],
  },
  'rpa/get-rpa-run': {
    summary: 'Read an automation run',
    tag: 'Service-review automation',
    description:
      "One view-on-page or check-auth-status run: status, outcome, steps, values entered and screenshots' metadata.",
    outcomes: { 200: { description: 'The run', body: 'Run' } },
    failures: [404],
  },
  'rpa/start-check-auth-status': {
    summary: 'Check the authorization status of up to 25 requests',
    tag: 'Service-review automation',
    body: { schema: 'CheckAuthStatusBatch', optional: true },
    idempotent: true,
    description:
      "Each request's portal account is chosen as for view-on-page (or its payer connection: docs/payer-api.md). Without `partial`, unknown requests are named in a 404 (`requestExternalIds`), requests no account can be chosen for in a 422 (`requests: [{requestExternalId, reason}]`), and nothing is started. With `partial: true` the others start and the refused come back in the 202's `requests` with the same reasons (`request_not_found` for an unknown one); when none can start, the answer is the 404 or 422 it would be without the flag.",
    outcomes: { 202: { description: 'The batch is started', body: 'BatchStarted', headers: ['Location'] } },
    failures: [404, 409, 422],
  },
  'rpa/get-check-auth-status': {
    summary: "Read a check-auth-status batch's progress",
    tag: 'Service-review automation',
    description:
      "How many of the batch's requests are done or failed, and each one's run, status, outcome and authorization.",
    outcomes: { 200: { description: 'The progress', body: 'BatchProgress' } },
    failures: [404],
  },
  'webhooks/create-webhook': {
    summary: 'Subscribe a URL to events',
    tag: 'Webhooks',
    description:
      'https and public addresses only (locally also http and loopback). The answer carries the signing secret, shown this once; a client has at most 20 subscriptions (409 past that).',
    body: { schema: 'WebhookSubscription' },
    outcomes: { 201: { description: 'Created, with its secret', body: 'WebhookWithSecret', headers: ['Location'] } },
    failures: [409],
  },
  'webhooks/list-webhooks': {
    summary: 'List the webhook subscriptions',
    tag: 'Webhooks',
    description: "Every subscription the API key reaches (an organization's key: its organization's), oldest first.",
    outcomes: { 200: { description: 'The subscriptions', body: 'WebhookList' } },
  },
  'webhooks/get-webhook': {
    summary: 'Read a webhook subscription',
    tag: 'Webhooks',
    description: 'Its URL, event types, status and when its secret was made; never the secret.',
    outcomes: { 200: { description: 'The subscription', body: 'Webhook' } },
    failures: [404],
  },
  'webhooks/delete-webhook': {
    summary: 'Delete a webhook subscription',
    tag: 'Webhooks',
    description: 'Nothing more is sent to it: its pending deliveries end failed (`subscription_deleted`).',
    outcomes: { 204: { description: 'Deleted', body: 'none' } },
    failures: [404],
  },
  'webhooks/rotate-webhook-secret': {
    summary: "Rotate a subscription's signing secret",
    tag: 'Webhooks',
    description:
      'A new secret, shown this once. For 24 hours deliveries carry two signatures, by the new and the previous secret; then the new one only.',
    outcomes: { 200: { description: 'The subscription with its new secret', body: 'WebhookWithSecret' } },
    failures: [404],
  },
  'webhooks/test-webhook': {
    summary: 'Send a test event',
    tag: 'Webhooks',
    description:
      'A `webhook.test` event to this subscription alone (a disabled one too), delivered and retried like any other.',
    outcomes: { 202: { description: 'The delivery, pending', body: 'WebhookDelivery' } },
    failures: [404],
  },
  'webhooks/list-webhook-deliveries': {
    summary: "List a subscription's deliveries",
    tag: 'Webhooks',
    description:
      'Newest first, each with its status, attempts, last response status and timings; kept 30 days. A page’s `nextCursor` asks for the next one.',
    querySchema: 'WebhookDeliveryListQuery',
    outcomes: { 200: { description: 'A page, newest first', body: 'WebhookDeliveryPage' } },
    failures: [404],
  },
  'webhooks/redeliver-webhook-delivery': {
    summary: 'Deliver again',
    tag: 'Webhooks',
    description:
      'A delivered or failed delivery goes out again now, with the same webhook-id and a fresh retry schedule; 409 while it is pending.',
    outcomes: { 202: { description: 'The delivery, pending again', body: 'WebhookDelivery' } },
    failures: [404, 409],
  },
  'schemas/list-schemas': {
    summary: 'List the JSON Schemas',
    tag: 'Schemas',
    description: 'The public JSON Schemas by name, each with its URL and the URL that validates against it.',
    outcomes: { 200: { description: 'The schemas clients can read and validate against', body: 'SchemaList' } },
  },
  'schemas/get-schema': {
    summary: 'Read a JSON Schema',
    tag: 'Schemas',
    description: "Draft-07, with every array's items as an array of schemas, one per kind of element.",
    outcomes: {
      200: { description: 'The schema', body: 'JsonSchema', mediaType: 'application/schema+json' },
    },
    failures: [404],
  },
  'schemas/validate-payload': {
    summary: 'Validate any payload against a schema',
    tag: 'Schemas',
    description:
      'Always 200 for a known schema: the Validation result says whether the payload passes and, if not, why.',
    body: { anyJson: true },
    outcomes: { 200: { description: 'The Validation result, whatever it is', body: 'ValidationResult' } },
    failures: [404],
  },
  'docs/get-openapi-document': {
    summary: 'This OpenAPI document',
    tag: 'API description',
    description:
      "Generated from the route table and the validators' JSON Schemas; `servers` is this API as the caller reached it.",
    outcomes: { 200: { description: 'OpenAPI 3.1', body: 'OpenApiDocument' } },
  },
  'docs/get-api-reference': {
    summary: 'The API reference page',
    tag: 'API description',
    description: 'An HTML page rendering this document; it works offline (nothing is loaded from elsewhere).',
    outcomes: { 200: { description: 'The page', body: 'Html', mediaType: 'text/html' } },
  },
  'docs/get-api-reference-script': {
    summary: "The reference page's renderer",
    tag: 'API description',
    description: "Scalar's standalone script, served here so that the reference page loads nothing from elsewhere.",
    outcomes: { 200: { description: 'JavaScript (Scalar)', body: 'JavaScript', mediaType: 'text/javascript' } },
  },
};
