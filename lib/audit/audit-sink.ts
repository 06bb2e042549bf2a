/**
 * The audit trail's port: one event per access to PHI or credentials through the API
 * (docs/security.md, "Audit trail"). Ids and outcomes only: never a body, a query value, a file
 * name or anything else a client sent besides the ids declared for its route.
 */
export interface AuditEvent {
  /** When the request ended, ISO 8601. */
  time: string;
  /** `<resource>.<verb>` from the route table, e.g. `attachment.download`. */
  action: string;
  /** `METHOD /path/{template}`: the route, not the URL (the URL may hold ids that failed validation). */
  route: string;
  /** The HTTP status the client received. */
  outcome: number;
  /** The tenant; null when the caller could not be identified (an invalid scraper token). */
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

export interface AuditSink {
  /** Appends one event; rejects when it could not be stored. */
  write(event: AuditEvent): Promise<void>;
}
