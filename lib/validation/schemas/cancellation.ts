import { DRAFT, identifier } from './common.ts';

/** Body of POST /api/external/v1.1/Requests/{externalId}/cancel (docs/payer-api.md, "Cancelling"). */
export const cancelRequestSchema = {
  $schema: DRAFT,
  $id: 'CancelRequest',
  title: 'CancelRequest',
  type: 'object',
  additionalProperties: false,
  required: ['clientUserId'],
  properties: {
    clientUserId: identifier(
      "The client user on whose behalf the request is cancelled (it selects the organization's payer connection)",
    ),
    payerConnectionExternalId: identifier(
      "The payer connection to send the cancel through (the client user's organization's, active). Without it: the organization's active connection to the request's patient.PayerId",
    ),
  },
} as const;
