import type { PortalCredentials } from '#lib/portal-accounts/credentials';

/**
 * Port: where a browser worker gets the portal credentials of the run it is on. The worker's role
 * cannot decrypt portal secrets (docs/security.md); it asks the run credentials function
 * (run-credentials.ts) with ids only, and the function checks the run before it opens anything.
 * Adapter: lambda-credentials-source.ts (Lambda Invoke; locally the loopback stand-in).
 */
export interface RunCredentialsRequest {
  clientId: string;
  requestExternalId: string;
  runId: string;
  /** The account the run recorded as selected (its `portalAccountId`). */
  portalAccountId: string;
  /** The run's current attempt (1 for the first, n for the n-th `started` step): credentials are issued once per attempt. */
  attempt: number;
}

export interface CredentialsSource {
  /**
   * The account's clear credentials, for one login; never log or keep them. Throws
   * PortalFailure('credentials_refused') when the function refuses (the run ended, is another
   * account's, this attempt already had them, …); any other error when it could not be asked.
   */
  issue(request: RunCredentialsRequest): Promise<PortalCredentials>;
}
