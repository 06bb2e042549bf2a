/*
 * Names shared by the functions (lib/observability/) and the alarms and dashboard that read what they
 * write (infra/constructs/monitoring.ts). No imports: infra reads this without loading Powertools.
 */

/** The `service` of every log line and the default dimension of every metric. */
export const SERVICE_NAME = 'service-review';

/** The one CloudWatch namespace of the application metrics. */
export const METRICS_NAMESPACE = 'ServiceReview';

export const METRIC = {
  /** Per route (dimension `route`): one per call, and 0 or 1 for 4xx and 5xx, so Average is a rate. */
  requests: 'Requests',
  clientErrors: 'ClientErrors',
  serverErrors: 'ServerErrors',
  latency: 'Latency',
  /** Per `verdict` (lib/attachments/attachment-verification.ts VerifyOutcome): what the verifier made of an object. */
  attachmentVerdicts: 'AttachmentVerdicts',
  /** Per `kind` and `outcome`: automation runs as they end (lib/portal/worker.ts). */
  automationRuns: 'AutomationRuns',
  /** Per `status` (`failing`, `disabled`, `active`): a webhook subscription whose health changed (lib/webhooks/delivery.ts). */
  webhookStatusChanges: 'WebhookStatusChanges',
} as const;
