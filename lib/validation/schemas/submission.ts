import { DRAFT, identifier } from './common.ts';

/** Body of POST /api/external/v1.1/Requests/{externalId}/submit (docs/payer-api.md, "Submitting"). */
export const submitRequestSchema = {
  $schema: DRAFT,
  $id: 'SubmitRequest',
  title: 'SubmitRequest',
  type: 'object',
  additionalProperties: false,
  required: ['clientUserId'],
  properties: {
    clientUserId: identifier(
      "The client user on whose behalf the request is submitted (it selects the organization's payer connection)",
    ),
    payerConnectionExternalId: identifier(
      "The payer connection to submit through (the client user's organization's, active). Without it: the organization's active connection to the request's patient.PayerId",
    ),
    attachmentIds: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      uniqueItems: true,
      items: identifier('An attachment of the request (available)'),
      description:
        "The attachments this submission carries: the answer to the payer's request for more information (authorization.informationRequested). An update carries these and those the replaced claim had; without the field, every available attachment",
    },
    dryRun: {
      type: 'boolean',
      description: 'true: answer the PAS Bundle that would be sent and its problems; send nothing, start nothing',
    },
  },
} as const;
