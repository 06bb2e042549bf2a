import { DRAFT, identifier } from './common.ts';

/** Body of POST …/ServiceReviews/requests/{requestExternalId}/rpa (required since 2025-03-10). */
export const rpaAccessRequestSchema = {
  $schema: DRAFT,
  $id: 'RpaAccessRequest',
  title: 'RpaAccessRequest',
  type: 'object',
  additionalProperties: false,
  required: ['clientUserId'],
  properties: {
    clientUserId: identifier('The client user on whose behalf the automation runs'),
  },
} as const;
