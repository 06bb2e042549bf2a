import {
  changedByAnotherWrite,
  changedConcurrently,
  checkIfMatch,
  retryOnConflict,
  staleVersion,
  VersionConflict,
} from '#lib/concurrency';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import { AlreadyExists, Conflict, Invalid } from '#lib/errors';
import { log } from '#lib/observability/logger';
import type { Scope } from '#lib/tenancy/scope';
import { load, organizationOf, type PortalAccountContext } from './portal-account-context.ts';
import type { NewPortalAccount, PortalAccountInput } from './portal-account-input.ts';
import { etagOf } from './portal-account-representation.ts';
import { portalOf } from './portal-registry.ts';

/*
 * Writing portal accounts: create, replace (a move to another organization included) and delete, each
 * counted against the organization's quota, conditional on If-Match or a body `version` when given.
 */

const MAX_ATTEMPTS = 3;
const SUBJECT = 'portal account';

/** TOTP seeds are base32: stored upper case without padding, the form authenticators expect. */
const normalizeTotpSecret = (secret: string) => secret.toUpperCase().replace(/=+$/, '');

interface Preconditions {
  ifMatch?: string | undefined;
  version?: number | undefined;
}

const hasPrecondition = (p: Preconditions) => p.ifMatch !== undefined || p.version !== undefined;

/** A body `version` is an If-Match of that one ETag. */
const checkPreconditions = (p: Preconditions, current: StoredPortalAccount) => {
  if (p.version !== undefined && p.version !== current.version) throw staleVersion(SUBJECT, etagOf(current));
  checkIfMatch(p.ifMatch, etagOf(current), SUBJECT);
};

/**
 * Another writer won the race: with a precondition that is a stale write; without one, the caller
 * reads again and retries a few times.
 */
const retryOptions = (p: Preconditions) => ({
  attempts: hasPrecondition(p) ? 1 : MAX_ATTEMPTS,
  onExhausted: (_: unknown, retryAfterMs: number) =>
    hasPrecondition(p) ? changedByAnotherWrite(SUBJECT) : changedConcurrently(SUBJECT, retryAfterMs),
});

/** The fields a client writes (all but the secrets), with their defaults; create and replace share them. */
const describedBy = (input: PortalAccountInput) => ({
  clientUserId: input.clientUserId,
  portalId: input.portalId,
  payerIds: input.payerIds ?? [],
  displayName: input.displayName ?? portalOf(input.portalId)?.name ?? input.portalId,
  username: input.username,
  status: input.status ?? ('active' as const),
});

export async function create(
  ctx: PortalAccountContext,
  scope: Scope,
  input: NewPortalAccount,
): Promise<StoredPortalAccount> {
  const { clientId } = scope;
  const organizationId = await organizationOf(ctx, scope, input.clientUserId);
  // No read first: the conditional put refuses an existing externalId (409 below).
  const { externalId } = input;
  const at = ctx.now().toISOString();
  const ref = { clientId, organizationId, externalId };
  const account: StoredPortalAccount = {
    ...ref,
    ...describedBy(input),
    lastLogin: null,
    attention: null,
    password: await ctx.sealer(ref, 'password', input.password),
    passwordChangedAt: at,
    totpSecret:
      input.totpSecret === undefined
        ? null
        : await ctx.sealer(ref, 'totpSecret', normalizeTotpSecret(input.totpSecret)),
    totpSecretChangedAt: input.totpSecret === undefined ? null : at,
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  await ctx.quotas.reservePortalAccount(clientId, organizationId);
  try {
    await ctx.store.create(account);
  } catch (error) {
    await ctx.quotas.releasePortalAccount(clientId, organizationId);
    if (error instanceof VersionConflict) throw new AlreadyExists(`Portal account ${externalId}`);
    throw error;
  }
  log.info('Portal account created', {
    clientId,
    organizationId,
    portalAccountId: externalId,
    portalId: account.portalId,
    totpSecretSet: account.totpSecret !== null,
    keyring: account.password.keyring,
  });
  return account;
}

/** The account `input` replaces `current` with, in `organizationId`: secrets sealed again only when sent. */
async function replacement(
  ctx: PortalAccountContext,
  current: StoredPortalAccount,
  input: PortalAccountInput,
  ref: { clientId: string; organizationId: string; externalId: string },
): Promise<{ next: StoredPortalAccount; totpChanged: boolean }> {
  const at = ctx.now().toISOString();
  const totpChanged = input.totpSecret !== undefined && !(input.totpSecret === null && !current.totpSecret);
  const next: StoredPortalAccount = {
    ...ref,
    ...describedBy(input),
    lastLogin: current.lastLogin,
    // New credentials, or the status set to active, say the client dealt with the portal's refusal.
    attention: input.password !== undefined || totpChanged || input.status === 'active' ? null : current.attention,
    password: input.password === undefined ? current.password : await ctx.sealer(ref, 'password', input.password),
    passwordChangedAt: input.password === undefined ? current.passwordChangedAt : at,
    totpSecret:
      input.totpSecret === undefined
        ? current.totpSecret
        : input.totpSecret === null
          ? null
          : await ctx.sealer(ref, 'totpSecret', normalizeTotpSecret(input.totpSecret)),
    totpSecretChangedAt: totpChanged ? at : current.totpSecretChangedAt,
    version: current.version + 1,
    createdAt: current.createdAt,
    updatedAt: at,
  };
  return { next, totpChanged };
}

/** One attempt at a replace, on the account as read now; a lost race throws VersionConflict. */
async function replaceOnce(
  ctx: PortalAccountContext,
  scope: Scope,
  externalId: string,
  input: PortalAccountInput,
  preconditions: Preconditions,
): Promise<StoredPortalAccount> {
  const current = await load(ctx, scope, externalId);
  checkPreconditions(preconditions, current);
  // Within a restricted scope both organizations are the key's: such a key never moves an account.
  const organizationId = await organizationOf(ctx, scope, input.clientUserId);
  const moving = organizationId !== current.organizationId;
  // Secrets are sealed for their organization and cannot be re-sealed without decrypting.
  if (moving && (input.password === undefined || (current.totpSecret && input.totpSecret === undefined))) {
    throw new Conflict(
      'Moving a portal account to another organization requires its password (and its TOTP secret, if one is set) again.',
    );
  }
  const ref = { clientId: scope.clientId, organizationId, externalId };
  const { next, totpChanged } = await replacement(ctx, current, input, ref);
  // A move counts the account in its new organization first: refused there, nothing changes.
  if (moving) await ctx.quotas.reservePortalAccount(scope.clientId, organizationId);
  try {
    await ctx.store.update(next, current.version);
  } catch (error) {
    if (moving) await ctx.quotas.releasePortalAccount(scope.clientId, organizationId);
    throw error;
  }
  if (moving) await ctx.quotas.releasePortalAccount(scope.clientId, current.organizationId);
  log.info('Portal account replaced', {
    clientId: scope.clientId,
    organizationId,
    portalAccountId: externalId,
    portalId: next.portalId,
    version: next.version,
    passwordChanged: input.password !== undefined,
    totpSecretChanged: totpChanged,
    movedOrganization: moving,
  });
  return next;
}

export async function replace(
  ctx: PortalAccountContext,
  scope: Scope,
  externalId: string,
  input: PortalAccountInput,
  ifMatch?: string,
): Promise<StoredPortalAccount> {
  if (input.externalId !== undefined && input.externalId !== externalId) {
    throw new Invalid(`externalId in the body ("${input.externalId}") does not match the path ("${externalId}").`);
  }
  const preconditions = { ifMatch, version: input.version };
  return retryOnConflict(() => replaceOnce(ctx, scope, externalId, input, preconditions), retryOptions(preconditions));
}

export function remove(ctx: PortalAccountContext, scope: Scope, externalId: string, ifMatch?: string): Promise<void> {
  return retryOnConflict(async () => {
    const current = await load(ctx, scope, externalId);
    checkPreconditions({ ifMatch }, current);
    await ctx.store.delete(scope.clientId, externalId, current.version);
    await ctx.quotas.releasePortalAccount(scope.clientId, current.organizationId);
    log.info('Portal account deleted', {
      clientId: scope.clientId,
      organizationId: current.organizationId,
      portalAccountId: externalId,
      version: current.version,
    });
  }, retryOptions({ ifMatch }));
}
