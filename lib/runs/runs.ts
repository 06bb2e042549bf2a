import type { Scope } from '#lib/tenancy/scope';
import {
  contextOf,
  type RpaDependencies,
  type RunReadDependencies,
  type RunStartDependencies,
  type ScraperAccessDependencies,
} from './run-context.ts';
import { batchProgress, getRun } from './run-reads.ts';
import { type BatchBody, type StartBody, startCheckAuthStatus, startViewOnPage } from './run-start.ts';
import { issueAccessToken, session, verifyAccessToken } from './scraper-access.ts';
import type { ScraperClaims } from './scraper-token.ts';

/**
 * The automation's API use cases (docs/rpa.md), independent of HTTP and of AWS, each in the module of
 * its job: scraper tokens and the scraper session (scraper-access.ts), starting view-on-page runs and
 * check-auth-status batches (run-start.ts), reading them (run-reads.ts). The executions themselves run
 * in the worker (worker.ts). An organization-restricted key (#lib/tenancy/scope) reaches only its
 * organization's client users, runs and batches: others are 404.
 */
export const rpaService = (deps: RpaDependencies) => ({
  ...scraperAccessService(deps),
  ...runStartService(deps),
  ...runReadService(deps),
});

/** The scraper's token and session alone (the scraper routes): no Step Functions client. */
export const scraperAccessService = (deps: ScraperAccessDependencies) => {
  const ctx = contextOf(deps);
  return {
    issueAccessToken: (caller: Scope & { keyId: string }, externalId: string, clientUserId: string) =>
      issueAccessToken(ctx, caller, externalId, clientUserId),
    verifyAccessToken: (token: string | undefined, externalId: string) => verifyAccessToken(ctx, token, externalId),
    session: (claims: ScraperClaims) => session(ctx, claims),
  };
};

/** Issuing scraper tokens alone (the token route): no screenshots' S3 client, no run store reads. */
export const accessTokenService = (deps: Pick<ScraperAccessDependencies, 'tenants' | 'requests' | 'tokens'>) => ({
  issueAccessToken: (caller: Scope & { keyId: string }, externalId: string, clientUserId: string) =>
    issueAccessToken(deps, caller, externalId, clientUserId),
});

/** Reading runs and batches alone (the GET routes): a wiring of these imports no token key, S3 or Secrets Manager. */
export const runReadService = (deps: RunReadDependencies) => {
  const ctx = contextOf(deps);
  return {
    getRun: (scope: Scope, externalId: string, runId: string) => getRun(ctx, scope, externalId, runId),
    batchProgress: (scope: Scope, batchId: string) => batchProgress(ctx, scope, batchId),
  };
};

/** Starting runs and batches alone (the start routes, the re-checks): no token key, S3 or Secrets Manager. */
export const runStartService = (deps: RunStartDependencies) => {
  const ctx = contextOf(deps);
  return {
    startViewOnPage: (scope: Scope, externalId: string, body: StartBody) =>
      startViewOnPage(ctx, scope, externalId, body),
    startCheckAuthStatus: (scope: Scope, body: BatchBody) => startCheckAuthStatus(ctx, scope, body),
  };
};
