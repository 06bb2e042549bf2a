import type { SchemaName } from './schema-names.ts';
import { presignedUploadSchema } from './schemas/attachment.ts';
import { cancelRequestSchema } from './schemas/cancellation.ts';
import {
  payerConnectionListQuerySchema,
  payerConnectionReplacementSchema,
  payerConnectionSchema,
} from './schemas/payer-connection.ts';
import {
  portalAccountFilterSchema,
  portalAccountListQuerySchema,
  portalAccountReplacementSchema,
  portalAccountSchema,
} from './schemas/portal-account.ts';
import { authorizationHistoryQuerySchema, requestAddressedByPathSchema, requestSchema } from './schemas/request.ts';
import { checkAuthStatusBatchSchema, viewOnPageRequestSchema } from './schemas/rpa.ts';
import { rpaAccessRequestSchema } from './schemas/rpa-access-request.ts';
import { submitRequestSchema } from './schemas/submission.ts';
import { webhookDeliveryListQuerySchema, webhookSubscriptionSchema } from './schemas/webhook.ts';

/** Every schema the build compiles, by name. Read by scripts/compile-schemas.ts only. */
export const schemaSources: Record<SchemaName, Record<string, unknown>> = {
  Request: requestSchema,
  RequestAddressedByPath: requestAddressedByPathSchema,
  PortalAccount: portalAccountSchema,
  PortalAccountReplacement: portalAccountReplacementSchema,
  PortalAccountFilter: portalAccountFilterSchema,
  PortalAccountListQuery: portalAccountListQuerySchema,
  PayerConnection: payerConnectionSchema,
  PayerConnectionReplacement: payerConnectionReplacementSchema,
  PayerConnectionListQuery: payerConnectionListQuerySchema,
  PresignedUpload: presignedUploadSchema,
  AuthorizationHistoryQuery: authorizationHistoryQuerySchema,
  RpaAccessRequest: rpaAccessRequestSchema,
  ViewOnPageRequest: viewOnPageRequestSchema,
  CheckAuthStatusBatch: checkAuthStatusBatchSchema,
  SubmitRequest: submitRequestSchema,
  CancelRequest: cancelRequestSchema,
  WebhookSubscription: webhookSubscriptionSchema,
  WebhookDeliveryListQuery: webhookDeliveryListQuerySchema,
};
