import { DRAFT, identifier } from './common.ts';

/** A batch checks 1 to 25 requests (lib/runs/runs.ts bounds its work with the same number). */
export const MAX_BATCH_REQUESTS = 25;

/** The account a start may name; without it the account is chosen as docs/rpa.md says. */
const portalAccountChoice = identifier(
  "The portal account to use (the client user's organization's, active). Without it: the organization's oldest active account serving the request's patient.PayerId, else its only active account",
);

/** Body of POST …/ServiceReviews/requests/{requestExternalId}/rpa/view-on-page. */
export const viewOnPageRequestSchema = {
  $schema: DRAFT,
  $id: 'ViewOnPageRequest',
  title: 'ViewOnPageRequest',
  type: 'object',
  additionalProperties: false,
  required: ['clientUserId'],
  properties: {
    clientUserId: identifier(
      "The client user on whose behalf the automation runs (it selects the organization's portal account)",
    ),
    portalAccountExternalId: portalAccountChoice,
  },
} as const;

/** Body of POST …/ServiceReviews/requests/rpa/batch/check-auth-status. */
export const checkAuthStatusBatchSchema = {
  $schema: DRAFT,
  $id: 'CheckAuthStatusBatch',
  title: 'CheckAuthStatusBatch',
  type: 'object',
  additionalProperties: false,
  required: ['clientUserId', 'requestExternalIds'],
  properties: {
    clientUserId: identifier(
      "The client user on whose behalf the automation runs (it selects the organization's portal accounts)",
    ),
    portalAccountExternalId: portalAccountChoice,
    requestExternalIds: {
      type: 'array',
      description: 'The requests whose authorization status is read on the payer portal, each once',
      minItems: 1,
      maxItems: MAX_BATCH_REQUESTS,
      uniqueItems: true,
      items: identifier("A request's externalId"),
    },
    partial: {
      type: 'boolean',
      description:
        'true: start the requests that can be started and answer the others in `requests` with their reason (202); if none can, the batch is refused as without it. Absent or false: any request that cannot be started refuses the batch (404 or 422) and nothing starts',
    },
  },
} as const;
