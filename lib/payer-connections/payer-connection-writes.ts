import {
  changedByAnotherWrite,
  changedConcurrently,
  checkIfMatch,
  retryOnConflict,
  staleVersion,
  VersionConflict,
} from '#lib/concurrency';
import type { StoredPayerConnection } from '#lib/entities/payer-connection';
import { AlreadyExists, Invalid, Unprocessable } from '#lib/errors';
import { log } from '#lib/observability/logger';
import type { Scope } from '#lib/tenancy/scope';
import { load, organizationOf, type PayerConnectionContext } from './payer-connection-context.ts';
import type { NewPayerConnection, PayerConnectionInput } from './payer-connection-input.ts';
import { etagOf } from './payer-connection-representation.ts';

/*
 * Writing payer connections: create, replace (a move to another organization included) and delete, each
 * counted against the organization's quota, conditional on If-Match or a body `version` when given: the
 * rules of portal accounts (docs/portal-accounts.md), without secrets to seal.
 */

const MAX_ATTEMPTS = 3;
const SUBJECT = 'payer connection';

interface Preconditions {
  ifMatch?: string | undefined;
  version?: number | undefined;
}

const hasPrecondition = (p: Preconditions) => p.ifMatch !== undefined || p.version !== undefined;

/** A body `version` is an If-Match of that one ETag. */
const checkPreconditions = (p: Preconditions, current: StoredPayerConnection) => {
  if (p.version !== undefined && p.version !== current.version) throw staleVersion(SUBJECT, etagOf(current));
  checkIfMatch(p.ifMatch, etagOf(current), SUBJECT);
};

/** Another writer won the race: with a precondition that is a stale write; without one, read again and retry. */
const retryOptions = (p: Preconditions) => ({
  attempts: hasPrecondition(p) ? 1 : MAX_ATTEMPTS,
  onExhausted: (_: unknown, retryAfterMs: number) =>
    hasPrecondition(p) ? changedByAnotherWrite(SUBJECT) : changedConcurrently(SUBJECT, retryAfterMs),
});

/**
 * A connection is to a payer whose API operators keep in the directory: to any other it would never be
 * used (the request would go to the payer's portal), so it is refused rather than stored for nothing.
 */
const checkPayerHasApi = async (ctx: PayerConnectionContext, payerId: string) => {
  if (await ctx.endpoints.get(payerId)) return;
  throw new Unprocessable(
    `Payer ${payerId} has no API in the payer directory: requests to it go through its portal, with a portal account.`,
    { reason: 'no_payer_api', field: 'payerId' },
  );
};

/**
 * The status a replace leaves: `disabled` when asked for; else active, but for a connection that needs
 * attention and whose payer and client_id stay the same without the client saying `active`: the payer's
 * refusal still stands (docs/payer-connections.md, "Status").
 */
const statusAfter = (current: StoredPayerConnection, input: PayerConnectionInput) => {
  if (input.status === 'disabled') return { status: 'disabled' as const, statusReason: null };
  const stillRefused =
    current.status === 'attention' &&
    input.status === undefined &&
    input.clientId === current.payerClientId &&
    input.payerId === current.payerId;
  return stillRefused
    ? { status: 'attention' as const, statusReason: current.statusReason }
    : { status: 'active' as const, statusReason: null };
};

export async function create(
  ctx: PayerConnectionContext,
  scope: Scope,
  input: NewPayerConnection,
): Promise<StoredPayerConnection> {
  const { clientId } = scope;
  const organizationId = await organizationOf(ctx, scope, input.clientUserId);
  await checkPayerHasApi(ctx, input.payerId);
  const at = ctx.now().toISOString();
  const connection: StoredPayerConnection = {
    clientId,
    organizationId,
    externalId: input.externalId,
    clientUserId: input.clientUserId,
    payerId: input.payerId,
    payerClientId: input.clientId,
    status: input.status ?? 'active',
    statusReason: null,
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  await ctx.quotas.reservePayerConnection(clientId, organizationId);
  try {
    // No read first: the conditional put refuses an existing externalId (409).
    await ctx.store.create(connection);
  } catch (error) {
    await ctx.quotas.releasePayerConnection(clientId, organizationId);
    if (error instanceof VersionConflict) throw new AlreadyExists(`Payer connection ${input.externalId}`);
    throw error;
  }
  log.info('Payer connection created', {
    clientId,
    organizationId,
    payerConnectionId: connection.externalId,
    payerId: connection.payerId,
    status: connection.status,
  });
  return connection;
}

/** One attempt at a replace, on the connection as read now; a lost race throws VersionConflict. */
async function replaceOnce(
  ctx: PayerConnectionContext,
  scope: Scope,
  externalId: string,
  input: PayerConnectionInput,
  preconditions: Preconditions,
): Promise<StoredPayerConnection> {
  const current = await load(ctx, scope, externalId);
  checkPreconditions(preconditions, current);
  // Within a restricted scope both organizations are the key's: such a key never moves a connection.
  const organizationId = await organizationOf(ctx, scope, input.clientUserId);
  // A connection kept on its payer may be disabled or re-enabled even after operators removed the payer's API.
  if (input.payerId !== current.payerId) await checkPayerHasApi(ctx, input.payerId);
  const moving = organizationId !== current.organizationId;
  const next: StoredPayerConnection = {
    ...current,
    organizationId,
    clientUserId: input.clientUserId,
    payerId: input.payerId,
    payerClientId: input.clientId,
    ...statusAfter(current, input),
    version: current.version + 1,
    updatedAt: ctx.now().toISOString(),
  };
  // A move counts the connection in its new organization first: refused there, nothing changes.
  if (moving) await ctx.quotas.reservePayerConnection(scope.clientId, organizationId);
  try {
    await ctx.store.update(next, current.version);
  } catch (error) {
    if (moving) await ctx.quotas.releasePayerConnection(scope.clientId, organizationId);
    throw error;
  }
  if (moving) await ctx.quotas.releasePayerConnection(scope.clientId, current.organizationId);
  log.info('Payer connection replaced', {
    clientId: scope.clientId,
    organizationId,
    payerConnectionId: externalId,
    payerId: next.payerId,
    status: next.status,
    version: next.version,
    movedOrganization: moving,
  });
  return next;
}

export async function replace(
  ctx: PayerConnectionContext,
  scope: Scope,
  externalId: string,
  input: PayerConnectionInput,
  ifMatch?: string,
): Promise<StoredPayerConnection> {
  if (input.externalId !== undefined && input.externalId !== externalId) {
    throw new Invalid(`externalId in the body ("${input.externalId}") does not match the path ("${externalId}").`, {
      field: 'externalId',
    });
  }
  const preconditions = { ifMatch, version: input.version };
  return retryOnConflict(() => replaceOnce(ctx, scope, externalId, input, preconditions), retryOptions(preconditions));
}

export function remove(ctx: PayerConnectionContext, scope: Scope, externalId: string, ifMatch?: string): Promise<void> {
  return retryOnConflict(async () => {
    const current = await load(ctx, scope, externalId);
    checkPreconditions({ ifMatch }, current);
    await ctx.store.delete(scope.clientId, externalId, current.version);
    await ctx.quotas.releasePayerConnection(scope.clientId, current.organizationId);
    log.info('Payer connection deleted', {
      clientId: scope.clientId,
      organizationId: current.organizationId,
      payerConnectionId: externalId,
      version: current.version,
    });
  }, retryOptions({ ifMatch }));
}
