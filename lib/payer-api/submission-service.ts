import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { payerDirectoryOf } from '#lib/payer-connections/payer-directory';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { dynamoSubmittedClaimStore } from '#lib/payer-subscriptions/dynamo-submitted-claim-store';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { automationQuotas } from '#lib/runs/automation-quotas';
import { dynamoAutomationUsage } from '#lib/runs/dynamo-automation-usage';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { sfnAutomationStarter } from '#lib/runs/sfn-automation-starter';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import type { Scope } from '#lib/tenancy/scope';
import { type CancelBody, startCancel } from './cancel-start.ts';
import { type SubmissionContext, type SubmitBody, startSubmission } from './submission-start.ts';

/**
 * Submissions to payers' PAS APIs on DynamoDB and Step Functions, built once per cold start: what the
 * submit and cancel routes use (no token, no signing key: the payer-API tasks send).
 */
const ctx: SubmissionContext = {
  now: () => new Date(),
  runs: dynamoRunStore,
  requests: dynamoRequestStore,
  payers: payerDirectoryOf(dynamoPayerEndpointStore, dynamoPayerConnectionStore),
  attachments: dynamoAttachmentStore,
  tenants: dynamoTenantStore,
  automation: sfnAutomationStarter,
  quotas: automationQuotas({ usage: dynamoAutomationUsage, tenants: dynamoTenantStore }),
  submittedClaims: dynamoSubmittedClaimStore,
};

export const submissions = {
  start: (scope: Scope, externalId: string, body: SubmitBody) => startSubmission(ctx, scope, externalId, body),
  cancel: (scope: Scope, externalId: string, body: CancelBody) => startCancel(ctx, scope, externalId, body),
};
