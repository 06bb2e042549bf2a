import type { StoredPortalAccount } from '#lib/entities/portal-account';
import type { RecheckThrough } from '#lib/entities/recheck';
import type { StoredRequest } from '#lib/entities/request';
import { choosePortalAccount } from '#lib/portal/portal-account-choice';
import { NoPortalAccount } from './errors.ts';
import type { PayerConnectionChoice } from './payer-directory.ts';
import type { RunStartContext } from './run-context.ts';

/*
 * Which channel a run goes through, chosen in this one module when the run is started
 * (docs/payer-api.md, "Choosing the channel"):
 * - a re-check's: the portal account or payer connection of the run that read the undecided status,
 *   while it is still the organization's and active (docs/rechecks.md); else the rules below;
 * - the payer's API (Da Vinci PAS), when the request's `patient.PayerId` has an endpoint in the
 *   operator's directory and the organization has an active connection to that payer, and the start
 *   names no portal account;
 * - else the payer's portal, through the portal account portal-account-choice.ts picks.
 * A start that names a portal account chooses the portal: the client asked for it.
 */

export type ChannelChoice =
  | { channel: 'portal'; account: StoredPortalAccount }
  | { channel: 'pas'; connection: PayerConnectionChoice };

/** What a batch's start says of its channels: a portal account it names, or the account or connection a re-check keeps. */
export interface ChannelTerms {
  portalAccountExternalId?: string | undefined;
  through?: RecheckThrough | undefined;
}

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
 * The account or connection a re-check keeps, if it can still be used: the organization's, active, and
 * (an account) on a portal the automation drives or (a connection) to a payer whose API is in the
 * directory. Undefined when it is gone or not usable: the rules choose again.
 */
async function keptChannel(
  ctx: RunStartContext,
  clientId: string,
  organizationId: string,
  through: RecheckThrough,
): Promise<ChannelChoice | undefined> {
  if (through.channel === 'portal') {
    const account = await ctx.accounts.get(clientId, through.portalAccountId);
    const usable =
      account?.organizationId === organizationId && account.status === 'active' && ctx.automated(account.portalId);
    return usable ? { channel: 'portal', account } : undefined;
  }
  const connection = await ctx.payers.connection(clientId, through.payerConnectionId);
  const usable =
    connection?.organizationId === organizationId &&
    connection.status === 'active' &&
    (await ctx.payers.apiOf(connection.payerId)) !== undefined;
  return usable ? { channel: 'pas', connection } : undefined;
}

/** Whether the kept channel serves this request: a connection, only a request of its payer (or of none named). */
const serves = (kept: ChannelChoice, request: StoredRequest) => {
  const payerId = payerIdOf(request);
  return (
    kept.channel === 'portal' || typeof payerId !== 'string' || payerId === '' || payerId === kept.connection.payerId
  );
};

/**
 * Each request's channel, or the NoPortalAccount that says why none can be chosen for it; other errors
 * (a named account that is not the organization's) are thrown. Requests of one payer share the answer:
 * a batch reads each payer's accounts and connection once, and a re-check's kept channel once.
 */
export async function chooseEach(
  ctx: RunStartContext,
  organizationId: string,
  found: readonly StoredRequest[],
  { portalAccountExternalId: named, through }: ChannelTerms,
): Promise<Array<ChannelChoice | NoPortalAccount>> {
  let kept: Promise<ChannelChoice | undefined> | undefined;
  const byPayer = new Map<string, Promise<ChannelChoice>>();
  const choose = async (request: StoredRequest): Promise<ChannelChoice> => {
    if (through) {
      kept ??= keptChannel(ctx, request.clientId, organizationId, through);
      const choice = await kept;
      if (choice && serves(choice, request)) return choice;
    }
    const payer = JSON.stringify(payerIdOf(request) ?? null);
    if (!byPayer.has(payer)) byPayer.set(payer, channelFor(ctx, organizationId, request, named));
    return byPayer.get(payer)!;
  };
  const settled = await Promise.allSettled(found.map(choose));
  const other = settled.find((result) => result.status === 'rejected' && !(result.reason instanceof NoPortalAccount));
  if (other) throw (other as PromiseRejectedResult).reason;
  return settled.map((result, i) =>
    result.status === 'fulfilled'
      ? result.value
      : // The reason names the request: another request of the payer gets its own.
        new NoPortalAccount((result.reason as NoPortalAccount).reason, found[i]!.externalId),
  );
}
