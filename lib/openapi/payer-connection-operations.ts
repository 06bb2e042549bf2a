import type { HandlerId } from '#lib/routes/route-table';
import type { Header, OperationDoc, Outcome } from './operation-doc.ts';

/** What the document says of the payer-connection routes (./operations.ts holds every route's, these among them). */

const CONNECTION_PATH = { externalId: "The payer connection's externalId" };
const connection = (description: string, status = 200, headers: readonly Header[] = ['ETag']) => ({
  [status]: { description, body: 'PayerConnectionRepresentation', headers },
});
const notModified: Record<number, Outcome> = {
  304: { description: 'If-None-Match holds: the client’s copy is current', body: 'none', headers: ['ETag'] },
};

export const payerConnectionOperations: Record<
  Extract<HandlerId, `payers/${string}-payer-connection${string}`>,
  OperationDoc
> = {
  'payers/create-payer-connection': {
    summary: 'Create a payer connection',
    tag: 'Payer connections',
    description:
      "The client_id the payer issued the organization, for a payer with an API in the payer directory (422 `no_payer_api` otherwise). The answer's jwksUri is what the payer verifies our client assertions with. An Idempotency-Key makes a retry safe.",
    body: { schema: 'PayerConnection' },
    idempotent: true,
    outcomes: connection('Created', 201, ['ETag', 'Location']),
    failures: [404, 409, 422],
  },
  'payers/list-payer-connections': {
    summary: "List the payer connections of a client user's organization",
    tag: 'Payer connections',
    description:
      "Pages of `pageSize` connections (1–100, default 25), oldest first; a page's `nextCursor` asks for the next one.",
    pathDescriptions: { externalId: 'The clientUserId whose organization’s connections are listed' },
    querySchema: 'PayerConnectionListQuery',
    outcomes: { 200: { description: 'A page, oldest first', body: 'PayerConnectionPage' } },
    failures: [404],
  },
  'payers/get-payer-connection': {
    summary: 'Read a payer connection',
    tag: 'Payer connections',
    description: 'The connection, its status and its jwksUri; its version is the ETag.',
    pathDescriptions: CONNECTION_PATH,
    ifNoneMatch: true,
    outcomes: { ...connection('The connection'), ...notModified },
    failures: [404],
  },
  'payers/replace-payer-connection': {
    summary: 'Replace a payer connection',
    tag: 'Payer connections',
    description:
      'Replaces every field. `status: active` clears attention (left out, attention stays until the clientId or payerId changes); `disabled` stops its use. A new payerId must have an API in the payer directory (422). If-Match (or `version`) refuses a stale write.',
    body: { schema: 'PayerConnectionReplacement' },
    pathDescriptions: CONNECTION_PATH,
    ifMatch: true,
    outcomes: connection('Replaced'),
    failures: [404, 409, 412, 422],
  },
  'payers/delete-payer-connection': {
    summary: 'Delete a payer connection',
    tag: 'Payer connections',
    description: 'Removes the connection permanently; If-Match makes it conditional.',
    pathDescriptions: CONNECTION_PATH,
    ifMatch: true,
    outcomes: { 204: { description: 'Deleted', body: 'none' } },
    failures: [404, 412],
  },
};
