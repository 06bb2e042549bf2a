import { DRAFT, identifier, paging, payerIdentifier } from './common.ts';

/**
 * Payer connections: an organization's client_id at a payer's API, per organization
 * (docs/payer-connections.md). Nothing secret: the private keys never leave their keeper.
 */
const fields = {
  externalId: identifier("The client's id of this payer connection"),
  clientUserId: identifier('A client user of the organization the connection belongs to'),
  payerId: payerIdentifier(
    "The payer, as a request's patient.PayerId names it: one with an API in the payer directory",
  ),
  clientId: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    pattern: '^[!-~]+$',
    description:
      'The client_id the payer issued the organization when it registered our jwksUri: printable ASCII, no spaces',
  },
  status: {
    type: 'string',
    enum: ['active', 'disabled'],
    description: 'disabled: nothing is sent to the payer with it; active also clears attention',
  },
} as const;

/** Body of POST …/Payers/connections. */
export const payerConnectionSchema = {
  $schema: DRAFT,
  $id: 'PayerConnection',
  title: 'PayerConnection',
  type: 'object',
  additionalProperties: false,
  required: ['externalId', 'clientUserId', 'payerId', 'clientId'],
  properties: fields,
} as const;

/** Body of PUT …/Payers/connections/{externalId}: every field again; `version` is an alternative to If-Match. */
export const payerConnectionReplacementSchema = {
  $schema: DRAFT,
  $id: 'PayerConnectionReplacement',
  title: 'PayerConnectionReplacement',
  type: 'object',
  additionalProperties: false,
  required: ['clientUserId', 'payerId', 'clientId'],
  properties: {
    ...fields,
    version: { type: 'integer', minimum: 1, description: 'The version this write replaces (like If-Match)' },
  },
} as const;

/** Query of GET …/Payers/connections/{clientUserId}/list: paging, as every list (other parameters are ignored). */
export const payerConnectionListQuerySchema = {
  $schema: DRAFT,
  $id: 'PayerConnectionListQuery',
  title: 'PayerConnectionListQuery',
  type: 'object',
  properties: { pageSize: paging.pageSize, cursor: paging.cursor },
} as const;
