import type { StoredPortalAccount } from '#lib/entities/portal-account';
import type { StoredRequest } from '#lib/entities/request';
import { choosePortalAccount } from '#lib/portal/portal-account-choice';
import { NoPortalAccount, RequestsNotAutomatable } from './errors.ts';
import type { PayerConnectionChoice } from './payer-directory.ts';
import type { RunStartContext } from './run-context.ts';

/*
 * Which channel a run goes through, chosen in this one module when the run is started
 * (docs/payer-api.md, "Choosing the channel"):
 * - the payer's API (Da Vinci PAS), when the request's `patient.PayerId` has an endpoint in the
 *   operator's directory and the organization has an active connection to that payer, and the start
 *   names no portal account;
 * - else the payer's portal, through the portal account portal-account-choice.ts picks.
 * A start that names a portal account chooses the portal: the client asked for it.
 */

export type ChannelChoice =
  | { channel: 'portal'; account: StoredPortalAccount }
  | { channel: 'pas'; connection: PayerConnectionChoice };

/** The account a run of `request` will use, chosen now (portal-account-choice.ts). */
export function accountFor(
  ctx: RunStartContext,
  organizationId: string,
  request: StoredRequest,
  named: string | undefined,
): Promise<StoredPortalAccount> {
  const { accounts, automated } = ctx;
  return choosePortalAccount({ accounts, automated }, { clientId: request.clientId, organizationId, request, named });
}

const payerIdOf = (request: StoredRequest): unknown =>
  (request.document.patient as Record<string, unknown> | undefined)?.PayerId;

/** The organization's active connection to the request's payer, when that payer has an API; else undefined. */
async function payerApiFor(
  ctx: RunStartContext,
  organizationId: string,
  request: StoredRequest,
): Promise<PayerConnectionChoice | undefined> {
  const payerId = payerIdOf(request);
  if (typeof payerId !== 'string' || payerId === '' || !(await ctx.payers.apiOf(payerId))) return undefined;
  return ctx.payers.activeConnection(request.clientId, organizationId, payerId);
}

/** The channel of a status check of `request`: its payer's API where the organization is connected, else the portal. */
async function channelFor(
  ctx: RunStartContext,
  organizationId: string,
  request: StoredRequest,
  named: string | undefined,
): Promise<ChannelChoice> {
  const connection = named ? undefined : await payerApiFor(ctx, organizationId, request);
  if (connection) return { channel: 'pas', connection };
  return { channel: 'portal', account: await accountFor(ctx, organizationId, request, named) };
}

/**
 * Each request's channel, or RequestsNotAutomatable naming every request no channel can be chosen for.
 * Requests of one payer share the answer: a batch reads each payer's accounts and connection once.
 */
export async function chooseEach(
  ctx: RunStartContext,
  organizationId: string,
  found: StoredRequest[],
  named: string | undefined,
): Promise<ChannelChoice[]> {
  const byPayer = new Map<string, Promise<ChannelChoice>>();
  const settled = await Promise.allSettled(
    found.map((request) => {
      const payer = JSON.stringify(payerIdOf(request) ?? null);
      if (!byPayer.has(payer)) byPayer.set(payer, channelFor(ctx, organizationId, request, named));
      // The reason names the request: another request of the payer gets its own.
      return byPayer.get(payer)!.catch((error: unknown) => {
        if (error instanceof NoPortalAccount) throw new NoPortalAccount(error.reason, request.externalId);
        throw error;
      });
    }),
  );
  const refused = settled.flatMap((result) =>
    result.status === 'rejected' && result.reason instanceof NoPortalAccount ? [result.reason] : [],
  );
  const other = settled.find((result) => result.status === 'rejected' && !(result.reason instanceof NoPortalAccount));
  if (other) throw (other as PromiseRejectedResult).reason;
  if (refused.length > 0) throw new RequestsNotAutomatable(refused);
  return settled.map((result) => (result as PromiseFulfilledResult<ChannelChoice>).value);
}
