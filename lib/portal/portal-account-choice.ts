import type { StoredPortalAccount } from '#lib/entities/portal-account';
import type { StoredRequest } from '#lib/entities/request';
import { NotFound } from '#lib/errors';
import type { PortalAccountStore } from '#lib/portal-accounts/portal-account-store';
import { NoPortalAccount } from '#lib/runs/errors';

/**
 * Which portal account a run uses, chosen when the run is started (docs/rpa.md, "Choosing the portal
 * account"): the account the body names; else the organization's oldest active account that serves
 * the request's `patient.PayerId` on a portal the automation drives; else the organization's only
 * active account. A start that cannot choose is refused with the reason, so no run is queued that
 * could never reach a portal.
 */

export interface AccountChoiceDependencies {
  accounts: Pick<PortalAccountStore, 'get' | 'page'>;
  /** Whether the automation drives this portal (a driver and a base URL). */
  automated: (portalId: string) => boolean;
}

export interface AccountChoice {
  clientId: string;
  /** The client user's organization: only its accounts can be chosen. */
  organizationId: string;
  request: Pick<StoredRequest, 'externalId' | 'document'>;
  /** `portalAccountExternalId` of the start's body. */
  named?: string | undefined;
}

/** Accounts read while looking for one that serves the payer (an organization has a handful). */
const MAX_ACCOUNTS_EVALUATED = 1000;

const payerIdOf = (document: Record<string, unknown>): string | undefined => {
  const patient = document.patient as Record<string, unknown> | undefined;
  const payerId = patient?.PayerId;
  return typeof payerId === 'string' && payerId !== '' ? payerId : undefined;
};

/** The organization's oldest active account serving `payerId` on an automated portal. */
const accountServingPayer = async (deps: AccountChoiceDependencies, choice: AccountChoice, payerId: string) => {
  let after: string | undefined;
  let evaluated = 0;
  do {
    const page = await deps.accounts.page({
      clientId: choice.clientId,
      organizationId: choice.organizationId,
      criteria: { payerId, status: 'active' },
      limit: 25,
      maxEvaluated: MAX_ACCOUNTS_EVALUATED - evaluated,
      ...(after ? { after } : {}),
    });
    const usable = page.items.find((account) => deps.automated(account.portalId));
    if (usable) return usable;
    evaluated += Math.max(page.items.length, 1);
    after = page.next;
  } while (after && evaluated < MAX_ACCOUNTS_EVALUATED);
  return undefined;
};

/** The organization's active accounts, at most two: enough to tell "only one" from "several". */
const activeAccounts = async (deps: AccountChoiceDependencies, choice: AccountChoice) => {
  const page = await deps.accounts.page({
    clientId: choice.clientId,
    organizationId: choice.organizationId,
    criteria: { status: 'active' },
    limit: 2,
    maxEvaluated: 2,
  });
  return { items: page.items, more: page.next !== undefined && page.items.length >= 2 };
};

/** The named account, if it is the organization's, active and automated; NotFound or NoPortalAccount otherwise. */
const namedAccount = async (deps: AccountChoiceDependencies, choice: AccountChoice, named: string) => {
  const account = await deps.accounts.get(choice.clientId, named);
  // Another organization's account is as unknown to this client user as another client's.
  if (!account || account.organizationId !== choice.organizationId) throw new NotFound(`Portal account ${named}`);
  if (account.status !== 'active') throw new NoPortalAccount('named_disabled', choice.request.externalId);
  if (!deps.automated(account.portalId)) {
    throw new NoPortalAccount('named_not_automated', choice.request.externalId);
  }
  return account;
};

/** The account a run of this request uses; NotFound (a named account) or NoPortalAccount with the reason. */
export const choosePortalAccount = async (
  deps: AccountChoiceDependencies,
  choice: AccountChoice,
): Promise<StoredPortalAccount> => {
  if (choice.named !== undefined) return namedAccount(deps, choice, choice.named);
  const payerId = payerIdOf(choice.request.document);
  if (payerId) {
    const serving = await accountServingPayer(deps, choice, payerId);
    if (serving) return serving;
  }
  const active = await activeAccounts(deps, choice);
  const [only] = active.items;
  if (!only) throw new NoPortalAccount('no_active_account', choice.request.externalId);
  if (active.items.length > 1 || active.more) {
    const reason = payerId ? 'no_payer_match_several_accounts' : 'no_payer_and_several_accounts';
    throw new NoPortalAccount(reason, choice.request.externalId);
  }
  if (!deps.automated(only.portalId))
    throw new NoPortalAccount('only_account_not_automated', choice.request.externalId);
  return only;
};
