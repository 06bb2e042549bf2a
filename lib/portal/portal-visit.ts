import type { LastLogin, PortalAccountAttention, StoredPortalAccount } from '#lib/entities/portal-account';
import type { RpaRunRecord, RunOutcome } from '#lib/entities/rpa';
import { PortalAccountBusy, PortalUnavailable } from '#lib/runs/errors';
import { changeRun, withStep } from '#lib/runs/run-changes';
import { isTerminal, type RunRef } from '#lib/runs/run-store';
import { LEASE_SECONDS } from './account-lease.ts';
import { isPortalFailure, type PortalFailureOutcome, type PortalSession } from './drivers/driver.ts';
import { type Browser, finishAll, type Invocation, type WorkerContext } from './worker-context.ts';

/*
 * A visit to the portal: one signed-in session on one portal account, under the account's lease, for
 * one run or a batch's group. Records each login on the account (lastLogin, attention for a refusal).
 */

/** A signed-in session on one account, for the runs `live` names (one run, or a batch's group). */
export interface Visit {
  /** Who holds the account's lease: the run, or the batch's group. */
  holder: string;
  portalAccountId: string;
  /** The runs the session serves; ended together by anything that happens before the login. */
  live: RunRef[];
  /** The run whose attempt the login counts as (the first of `live`). */
  anchor: RpaRunRecord;
}

/** What a refused login is recorded as on the portal account. */
const LOGIN_RESULTS: Partial<Record<PortalFailureOutcome, LastLogin['result']>> = {
  wrong_password: 'failed',
  account_locked: 'locked',
  mfa_required: 'mfa_required',
};

/** What a refused login leaves on the account: no automation logs in with it again until a client acts. */
const ATTENTION_OF: Partial<Record<PortalFailureOutcome, PortalAccountAttention['reason']>> = {
  wrong_password: 'wrong_password',
  account_locked: 'account_locked',
  mfa_required: 'mfa_required',
};

/** The login's result on the account: lastLogin, and attention for a refusal. */
async function recordLogin(
  ctx: WorkerContext,
  account: StoredPortalAccount,
  outcome: PortalFailureOutcome | 'succeeded',
  runId: string,
): Promise<void> {
  const result = outcome === 'succeeded' ? 'succeeded' : LOGIN_RESULTS[outcome];
  if (!result) return;
  const at = ctx.now().toISOString();
  const reason = outcome === 'succeeded' ? undefined : ATTENTION_OF[outcome];
  await ctx.accounts.setLastLogin(
    account.clientId,
    account.externalId,
    { result, at },
    reason && { reason, since: at, runId },
  );
}

/** The visit's account, if runs may still use it; the outcome that ends them otherwise. */
async function usableAccount(ctx: WorkerContext, visit: Visit): Promise<StoredPortalAccount | RunOutcome> {
  const account = await ctx.accounts.get(visit.anchor.clientId, visit.portalAccountId);
  const usable =
    account &&
    account.status === 'active' &&
    account.organizationId === visit.anchor.organizationId &&
    ctx.driverFor(account.portalId) &&
    ctx.portalBaseUrl(account.portalId);
  if (!usable) return 'no_portal_account';
  // The portal refused it before: another login would count towards (or extend) a lockout.
  if (account.attention) return 'account_needs_attention';
  return account;
}

/** A step on each live run, once: runs waiting behind a lease do not fill their steps with retries. */
async function noteWaiting(ctx: WorkerContext, refs: RunRef[]): Promise<void> {
  const waiting = 'waiting for the portal account';
  for (const ref of refs) {
    await changeRun(
      ctx.runs,
      ref,
      (run) =>
        isTerminal(run.status) || run.steps.at(-1)?.step === waiting
          ? undefined
          : { ...run, steps: withStep(run.steps, ctx.now().toISOString(), waiting, 'another session is using it') },
      ctx.now,
    );
  }
}

/**
 * Holds the account's lease while `work` runs, or throws PortalAccountBusy (the state machine tries
 * again later) after noting the wait on the runs. The lease is given back whatever happens.
 */
export async function withLease<T>(
  ctx: WorkerContext,
  lease: { clientId: string; portalAccountId: string; holder: string; live: RunRef[] },
  work: () => Promise<T>,
): Promise<T> {
  const { clientId, portalAccountId, holder, live } = lease;
  if (!(await ctx.leases.acquire(clientId, portalAccountId, holder, LEASE_SECONDS))) {
    await noteWaiting(ctx, live);
    throw new PortalAccountBusy();
  }
  try {
    return await work();
  } finally {
    await ctx.leases.release(clientId, portalAccountId, holder);
  }
}

/**
 * Signs in once with the visit's account and hands the session to `work`. What happens before the
 * session exists ends every live run of the visit alike; undefined then. Called under the lease.
 */
export async function visit<T>(
  ctx: WorkerContext,
  v: Visit,
  invocation: Invocation | undefined,
  work: (session: PortalSession) => Promise<T>,
): Promise<T | undefined> {
  // Read under the lease: a session that just ended may have marked the account.
  const account = await usableAccount(ctx, v);
  if (typeof account === 'string') return void (await finishAll(ctx, v.live, account));
  let browser: Browser;
  try {
    browser = await ctx.acquireBrowser();
  } catch (error) {
    if (isPortalFailure(error)) return void (await finishAll(ctx, v.live, 'browser_failed'));
    throw error;
  }
  try {
    const session = await logIn(ctx, v, account, browser, invocation);
    if (!session) return undefined;
    try {
      return await work(session);
    } finally {
      await session.close();
    }
  } finally {
    await ctx.releaseBrowser(browser);
  }
}

/** The login, recorded on the account; undefined when the portal refused it (the live runs ended then). */
async function logIn(
  ctx: WorkerContext,
  v: Visit,
  account: StoredPortalAccount,
  browser: Browser,
  invocation: Invocation | undefined,
): Promise<PortalSession | undefined> {
  let session: PortalSession;
  try {
    // Bounded by what the invocation has left at login: past its deadline nobody waits for the answer.
    const left = invocation?.getRemainingTimeInMillis() ?? ctx.timeoutMs;
    // The credentials come from the run credentials function, asked with ids only, for the anchor's attempt.
    const credentials = await ctx.openCredentials({
      clientId: v.anchor.clientId,
      requestExternalId: v.anchor.externalId,
      runId: v.anchor.runId,
      portalAccountId: account.externalId,
      attempt: v.anchor.steps.filter((step) => step.step === 'started').length,
    });
    session = await ctx.driverFor(account.portalId)!.logIn(browser, credentials, {
      baseUrl: ctx.portalBaseUrl(account.portalId)!,
      timeoutMs: Math.max(1, Math.min(ctx.timeoutMs, left)),
    });
  } catch (error) {
    if (!isPortalFailure(error)) throw error;
    await recordLogin(ctx, account, error.outcome, v.anchor.runId);
    if (error.outcome === 'portal_timeout') {
      for (const ref of v.live)
        await ctx.addStep(ref, 'the portal did not answer in time; the attempt will be retried');
      throw new PortalUnavailable();
    }
    return void (await finishAll(ctx, v.live, error.outcome));
  }
  await recordLogin(ctx, account, 'succeeded', v.anchor.runId);
  await ctx.addStep(v.anchor, 'logged in');
  return session;
}
