/**
 * How each route's calls are audited (lib/http/audit.ts; docs/security.md, "Audit trail"), keyed by
 * handler id so a route missing here, or an id no row has, does not compile; the obsolete v1 Portals
 * rows share their successor's handler and so its audit.
 */
import type { HandlerId } from './route-table.ts';

/** What an audit record names as the thing accessed (docs/security.md, "Audit trail"). */
type AuditResource =
  | 'request'
  | 'attachment'
  | 'portalAccount'
  | 'payerConnection'
  | 'rpaAccessToken'
  | 'rpaSession'
  | 'rpaRun'
  | 'rpaBatch'
  | 'webhook'
  | 'webhookDelivery';

/**
 * How a call of a route is audited (lib/http/audit.ts): an intent and an outcome record per call, with
 * ids only, never a body value other than the ids named here.
 */
export interface RouteAudit {
  /** `<resource>.<verb>`, e.g. `attachment.download`. */
  action: string;
  resource: AuditResource;
  /** Path variables that identify the resource (or its parents): `{ variable: idName }`. */
  ids?: Record<string, string>;
  /** Where the client user id is: a path variable, or the body's `clientUserId`. */
  clientUserId?: { path: string } | 'body';
  /** Body fields that hold arrays of ids (the batch's requestExternalIds): `{ field: idName }`. */
  bodyIds?: Record<string, string>;
  /** Creates and starts: the new resource's id, the last segment of the response's Location. */
  createdId?: string;
}

/** Under v1.1/Requests, `{externalId}` is the request's (attachments included: the spec's requestExternalId). */
const requestIds = { externalId: 'requestExternalId' };
const attachmentIds = { ...requestIds, attachmentId: 'attachmentId' };
const portalAccountIds = { externalId: 'portalAccountExternalId' };
const payerConnectionIds = { externalId: 'payerConnectionExternalId' };
const rpaRequestIds = { requestExternalId: 'requestExternalId' };
const webhookIds = { webhookId: 'webhookId' };

/**
 * Every call is audited, except on routes that touch no PHI nor credentials (`false`). Schemas list, get
 * and validate read published JSON Schemas and check a payload against one without storing, looking
 * anything up or answering with more than the payload's validation errors; the API's description and the
 * payer JWKS (public keys) are public (no PHI, no credential). See docs/security.md, "Audit trail".
 */
export const routeAudit: Record<HandlerId, RouteAudit | false> = {
  // Requests
  'requests/upsert-request-v1': {
    action: 'request.upsert',
    resource: 'request',
    ids: { appointmentId: 'requestExternalId' },
  },
  'requests/patch-request-v1': {
    action: 'request.patch',
    resource: 'request',
    ids: { appointmentId: 'requestExternalId' },
  },
  'requests/create-request': { action: 'request.create', resource: 'request', createdId: 'requestExternalId' },
  'requests/replace-request': { action: 'request.replace', resource: 'request', ids: requestIds },
  'requests/get-request': { action: 'request.read', resource: 'request', ids: requestIds },
  'requests/get-authorization-history': {
    action: 'request.authorizationHistory.read',
    resource: 'request',
    ids: requestIds,
  },
  'requests/submit-request': {
    action: 'request.submit',
    resource: 'request',
    ids: requestIds,
    clientUserId: 'body',
    createdId: 'runId',
  },
  'requests/cancel-request': {
    action: 'request.cancel',
    resource: 'request',
    ids: requestIds,
    clientUserId: 'body',
    createdId: 'runId',
  },

  // Attachments
  'attachments/create-attachment': {
    action: 'attachment.create',
    resource: 'attachment',
    ids: requestIds,
    createdId: 'attachmentId',
  },
  'attachments/list-attachments': { action: 'attachment.list', resource: 'attachment', ids: requestIds },
  'attachments/get-attachment': { action: 'attachment.read', resource: 'attachment', ids: attachmentIds },
  'attachments/download-attachment': { action: 'attachment.download', resource: 'attachment', ids: attachmentIds },
  'attachments/delete-attachment': { action: 'attachment.delete', resource: 'attachment', ids: attachmentIds },

  // Portal accounts (v1.1 and the obsolete v1 mirror). The list route's `{externalId}` is the clientUserId.
  'portal-accounts/create-portal-account': {
    action: 'portalAccount.create',
    resource: 'portalAccount',
    clientUserId: 'body',
    createdId: 'portalAccountExternalId',
  },
  'portal-accounts/list-portal-accounts': {
    action: 'portalAccount.list',
    resource: 'portalAccount',
    clientUserId: { path: 'externalId' },
  },
  'portal-accounts/get-portal-account': {
    action: 'portalAccount.read',
    resource: 'portalAccount',
    ids: portalAccountIds,
  },
  'portal-accounts/replace-portal-account': {
    action: 'portalAccount.replace',
    resource: 'portalAccount',
    ids: portalAccountIds,
    clientUserId: 'body',
  },
  'portal-accounts/delete-portal-account': {
    action: 'portalAccount.delete',
    resource: 'portalAccount',
    ids: portalAccountIds,
  },
  'portal-accounts/filter-portal-accounts': {
    action: 'portalAccount.filter',
    resource: 'portalAccount',
    clientUserId: 'body',
  },

  // Payer connections. The list route's `{externalId}` is the clientUserId.
  'payers/create-payer-connection': {
    action: 'payerConnection.create',
    resource: 'payerConnection',
    clientUserId: 'body',
    createdId: 'payerConnectionExternalId',
  },
  'payers/list-payer-connections': {
    action: 'payerConnection.list',
    resource: 'payerConnection',
    clientUserId: { path: 'externalId' },
  },
  'payers/get-payer-connection': {
    action: 'payerConnection.read',
    resource: 'payerConnection',
    ids: payerConnectionIds,
  },
  'payers/replace-payer-connection': {
    action: 'payerConnection.replace',
    resource: 'payerConnection',
    ids: payerConnectionIds,
    clientUserId: 'body',
  },
  'payers/delete-payer-connection': {
    action: 'payerConnection.delete',
    resource: 'payerConnection',
    ids: payerConnectionIds,
  },

  // Service-review automation
  'rpa/issue-rpa-access-token': {
    action: 'rpa.accessToken.issue',
    resource: 'rpaAccessToken',
    ids: rpaRequestIds,
    clientUserId: 'body',
  },
  'rpa/get-scraper-session': { action: 'rpa.session.read', resource: 'rpaSession', ids: rpaRequestIds },
  'rpa/start-view-on-page': {
    action: 'rpa.viewOnPage.start',
    resource: 'rpaRun',
    ids: rpaRequestIds,
    clientUserId: 'body',
    createdId: 'runId',
  },
  'rpa/get-rpa-run': { action: 'rpa.run.read', resource: 'rpaRun', ids: { ...rpaRequestIds, runId: 'runId' } },
  'rpa/start-check-auth-status': {
    action: 'rpa.checkAuthStatus.start',
    resource: 'rpaBatch',
    clientUserId: 'body',
    bodyIds: { requestExternalIds: 'requestExternalIds' },
    createdId: 'batchId',
  },
  'rpa/get-check-auth-status': {
    action: 'rpa.checkAuthStatus.read',
    resource: 'rpaBatch',
    ids: { batchId: 'batchId' },
  },

  // Webhooks
  'webhooks/create-webhook': { action: 'webhook.create', resource: 'webhook', createdId: 'webhookId' },
  'webhooks/list-webhooks': { action: 'webhook.list', resource: 'webhook' },
  'webhooks/get-webhook': { action: 'webhook.read', resource: 'webhook', ids: webhookIds },
  'webhooks/delete-webhook': { action: 'webhook.delete', resource: 'webhook', ids: webhookIds },
  'webhooks/rotate-webhook-secret': { action: 'webhook.rotateSecret', resource: 'webhook', ids: webhookIds },
  'webhooks/test-webhook': { action: 'webhook.test', resource: 'webhook', ids: webhookIds },
  'webhooks/list-webhook-deliveries': { action: 'webhookDelivery.list', resource: 'webhookDelivery', ids: webhookIds },
  'webhooks/redeliver-webhook-delivery': {
    action: 'webhookDelivery.redeliver',
    resource: 'webhookDelivery',
    ids: { ...webhookIds, deliveryId: 'deliveryId' },
  },

  // Public keys, published for anyone to read: no PHI, no credential.
  'payers/get-payer-jwks': false,
  // A payer's notification: no API client calls it, and it reads nothing back; the batches it starts are the
  // record of what it did (runs and their steps), like the re-checks'.
  'payers/receive-payer-notification': false,

  // Schemas and the API's description
  'schemas/list-schemas': false,
  'schemas/get-schema': false,
  'schemas/validate-payload': false,
  'docs/get-openapi-document': false,
  'docs/get-api-reference': false,
  'docs/get-api-reference-script': false,
};
