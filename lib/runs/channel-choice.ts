import type { StoredPortalAccount } from '#lib/entities/portal-account';
import type { StoredRequest } from '#lib/entities/request';
import { choosePortalAccount } from '#lib/portal/portal-account-choice';
import { NoPortalAccount, RequestsNotAutomatable } from './errors.ts';
import type { RunStartContext } from './run-context.ts';

/*
 * Which channel a run goes through, chosen in this one module when the run is started: the portal
 * account that reads the payer's portal (lib/portal/portal-account-choice.ts).
 */

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

/**
 * Each request's account, or RequestsNotAutomatable naming every request none can be chosen for.
 * Requests of one payer share the answer: a batch reads each payer's accounts once.
 */
export async function chooseEach(
  ctx: RunStartContext,
  organizationId: string,
  found: StoredRequest[],
  named: string | undefined,
): Promise<StoredPortalAccount[]> {
  const byPayer = new Map<string, Promise<StoredPortalAccount>>();
  const settled = await Promise.allSettled(
    found.map((request) => {
      const payer = JSON.stringify((request.document.patient as Record<string, unknown> | undefined)?.PayerId ?? null);
      if (!byPayer.has(payer)) byPayer.set(payer, accountFor(ctx, organizationId, request, named));
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
  return settled.map((result) => (result as PromiseFulfilledResult<StoredPortalAccount>).value);
}
