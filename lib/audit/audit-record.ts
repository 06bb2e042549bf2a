/*
 * The audit trail's record (docs/security.md, "Audit trail"): two per call of an audited route, the
 * intent before its handler runs and the outcome once the response is final, linked by the request
 * ids. Ids and outcomes only: never a body, a query value, a file name or anything else a client sent
 * besides the ids declared for its route. No imports: infra reads the marker and the fields (the
 * subscription filter, the Glue table) without loading Powertools.
 */

export type AuditPhase = 'intent' | 'outcome';

export interface AuditRecord {
  /** `intent`: the handler is about to run; `outcome`: the response the client received. */
  phase: AuditPhase;
  /** When the phase was recorded, ISO 8601. */
  time: string;
  /** `<resource>.<verb>` from the route table, e.g. `attachment.download`. */
  action: string;
  /** `METHOD /path/{template}`: the route, not the URL (the URL may hold ids that failed validation). */
  route: string;
  /** The HTTP status the client received (502 when the function failed without one); null in the intent. */
  outcome: number | null;
  /** The tenant; null when the caller could not be identified (an invalid scraper token, or not yet verified). */
  clientId: string | null;
  /** `apiKey` (through the authorizer) or `scraperToken` (verified by the handler). */
  credential: 'apiKey' | 'scraperToken';
  /** The API key's id, or the scraper token's id (`jti`); null when there is none. */
  keyId: string | null;
  clientUserId: string | null;
  resource: { type: string; ids: Record<string, string | string[] | null> };
  /** API Gateway's request id: the `x-amzn-RequestId` response header. */
  requestId: string | null;
  /** The function's request id: `requestId` in problem details bodies. */
  lambdaRequestId: string | null;
  sourceIp: string | null;
}

/** The record's fields in the order they are written; nothing else of a record reaches a line. */
export const AUDIT_RECORD_FIELDS = [
  'phase',
  'time',
  'action',
  'route',
  'outcome',
  'clientId',
  'credential',
  'keyId',
  'clientUserId',
  'resource',
  'requestId',
  'lambdaRequestId',
  'sourceIp',
] as const satisfies readonly (keyof AuditRecord)[];

/**
 * The field and value that mark a log line as an audit record: what the subscription filters on the
 * functions' log groups match (infra/constructs/audit-trail.ts). Only the audit logger writes it: the
 * service log's formatter drops any field it does not list (lib/observability/logger.ts), this one included.
 */
export const AUDIT_MARKER = { field: 'audit', value: 'v1' } as const;

/** One audit line, as on stdout and in the local file: Powertools' first fields, the marker, the record. */
export type AuditLine = {
  level: 'info';
  message: 'Audit intent' | 'Audit outcome';
  timestamp: string;
  service: string;
  xray_trace_id?: string;
  audit: typeof AUDIT_MARKER.value;
} & AuditRecord;
