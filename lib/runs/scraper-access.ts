import type { RpaRunRecord } from '#lib/entities/rpa';
import { historyEntryOf } from '#lib/requests/authorization-history';
import { authorizationView } from '#lib/requests/request-document';
import { apiKeyState } from '#lib/tenancy/api-keys';
import { clientUserInScope, reaches, type Scope } from '#lib/tenancy/scope';
import { InvalidScraperToken } from './errors.ts';
import { existingRequest, type ScraperAccessContext } from './run-context.ts';
import { SCREENSHOT_URL_SECONDS, SESSION_HISTORY, SESSION_RUNS } from './run-limits.ts';
import { runViewOf, type ScraperSession } from './run-views.ts';
import type { ScraperClaims } from './scraper-token.ts';

/*
 * The scraper's access: tokens for one request on behalf of one client user, and the session a token
 * holder sees (docs/rpa.md).
 */

/**
 * A scraper token for one request on behalf of one of the caller's client users, naming the API
 * key that asked for it (`keyId`, the authorizer's).
 */
export async function issueAccessToken(
  ctx: Pick<ScraperAccessContext, 'tenants' | 'requests' | 'tokens'>,
  caller: Scope & { keyId: string },
  externalId: string,
  clientUserId: string,
): Promise<{ accessToken: string; expiresAt: string }> {
  const { keyId, ...scope } = caller;
  await clientUserInScope(ctx.tenants, scope, clientUserId);
  await existingRequest(ctx, scope.clientId, externalId);
  const { token, expiresAt } = await ctx.tokens.sign({ ...scope, keyId, clientUserId, requestExternalId: externalId });
  return { accessToken: token, expiresAt };
}

/**
 * The claims of a token for this request whose API key is still active; InvalidScraperToken
 * otherwise. One read: revoking the key, or deleting the client (which revokes all its keys),
 * ends its tokens too. A key whose organization is not the token's is refused alike.
 */
export async function verifyAccessToken(
  ctx: ScraperAccessContext,
  token: string | undefined,
  externalId: string,
): Promise<ScraperClaims> {
  const claims = await ctx.tokens.verify(token, externalId);
  const key = await ctx.tenants.getApiKeyById(claims.clientId, claims.keyId);
  if (!key || apiKeyState(key, ctx.now()) !== 'active') throw new InvalidScraperToken('api key not active');
  if (key.organizationId !== claims.organizationId) throw new InvalidScraperToken('api key scope');
  return claims;
}

/** A run's view with a short-lived URL per screenshot. */
async function sessionRunOf(ctx: ScraperAccessContext, run: RpaRunRecord): Promise<ScraperSession['runs'][number]> {
  return {
    ...runViewOf(run),
    screenshots: await Promise.all(
      run.screenshots.map(async ({ objectKey, label, capturedAt }, i) => {
        const { url, expiresAt } = await ctx.screenshots.presignGet(objectKey, SCREENSHOT_URL_SECONDS);
        return { n: i + 1, label, capturedAt, url, urlExpiresAt: expiresAt };
      }),
    ),
  };
}

/**
 * What a token holder sees: the request's authorization with its latest changes, and its latest
 * runs with short-lived screenshot URLs. A token issued to an organization-restricted key shows
 * only its organization's runs among them; the history is the request's, so it shows all of it, but
 * names other organizations' runs without their ids.
 */
export async function session(ctx: ScraperAccessContext, claims: ScraperClaims): Promise<ScraperSession> {
  const request = await existingRequest(ctx, claims.clientId, claims.requestExternalId);
  const scope: Scope = claims.organizationId
    ? { clientId: claims.clientId, organizationId: claims.organizationId }
    : { clientId: claims.clientId };
  const [latest, changes] = await Promise.all([
    ctx.runs.latestRuns(claims.clientId, claims.requestExternalId, SESSION_RUNS),
    ctx.history.page(claims.clientId, claims.requestExternalId, { limit: SESSION_HISTORY }),
  ]);
  return {
    requestExternalId: request.externalId,
    clientUserId: claims.clientUserId,
    tokenExpiresAt: claims.expiresAt,
    authorization: authorizationView(request.authorization),
    authorizationHistory: changes.entries.map((entry) => historyEntryOf(entry, scope)),
    runs: await Promise.all(
      latest.filter((run) => reaches(scope, run.organizationId)).map((run) => sessionRunOf(ctx, run)),
    ),
  };
}
