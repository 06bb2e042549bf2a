import { describe, expect, it } from 'vitest';
import { SANDBOX_MEMBERS, SANDBOX_PAYER_ID, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { call, newTenant, uniqueId } from '#test/support/api';
import {
  createPortalAccount,
  createRequest,
  locationOf,
  portalAccount,
  portalSignIn,
  settledRun,
  startViewOnPage,
} from './rpa-end-to-end-support.ts';

/*
 * The walk-through, as a new user would do it on `npm start`, end to end on the shared local
 * stack (real Step Functions stand-in, real Chromium, the sandbox portal): a wrong password on the
 * account, several view-on-page runs at once, the right password back, one more run. The portal locks
 * a user after three failed logins; the automation must make one, then leave the account alone.
 */
const [plainUser] = SANDBOX_USERS;
const member = SANDBOX_MEMBERS.find((candidate) => candidate.memberId === 'SBX-10001')!;

describe('no lockouts, end to end', () => {
  it('a wrong password makes one login; the other runs stop at once; the right password back, a run fills the form', async () => {
    const tenant = await newTenant('e2e-no-lockouts');
    const { externalId: account } = await createPortalAccount(tenant, {
      externalId: 'front-desk',
      payerIds: [SANDBOX_PAYER_ID],
      username: plainUser.username,
      password: `not-the-password-${uniqueId('pw')}`,
    });
    const requests: string[] = [];
    for (let i = 0; i < 5; i++) {
      requests.push(await createRequest(tenant, uniqueId('E2E-LOCKOUT'), member, SANDBOX_PAYER_ID));
    }

    const started = await Promise.all(requests.map((id) => startViewOnPage(tenant, id)));
    for (const res of started) expect(res.status, res.text).toBe(202);
    const runs = await Promise.all(started.map((res) => settledRun(tenant, locationOf(res), 180_000)));
    const outcomes = runs.map((run) => run.outcome).sort();
    // One login reached the portal; every other run read the mark and stopped before a browser.
    expect(outcomes).toEqual([
      'account_needs_attention',
      'account_needs_attention',
      'account_needs_attention',
      'account_needs_attention',
      'wrong_password',
    ]);
    for (const run of runs.filter((candidate) => candidate.outcome === 'account_needs_attention')) {
      expect(run.steps.map((step: { step: string }) => step.step)).not.toContain('logged in');
      expect(run.steps.map((step: { step: string }) => step.step)).not.toContain('credentials issued');
    }
    const marked = await portalAccount(tenant, account);
    expect(marked.attention).toEqual({ reason: 'wrong_password', since: marked.lastLogin.at });
    expect(marked.lastLogin.result).toBe('failed');

    // The client puts the right password back: the mark is cleared, and the next run fills the form.
    const put = await call('PUT', `/api/external/v1.1/Portals/accounts/${account}`, {
      apiKey: tenant.apiKey,
      body: {
        clientUserId: tenant.clientUserId,
        portalId: 'sandbox',
        payerIds: [SANDBOX_PAYER_ID],
        username: plainUser.username,
        password: plainUser.password,
      },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.attention).toBeNull();
    const again = await startViewOnPage(tenant, requests[0]!);
    expect(again.status, again.text).toBe(202);
    expect(await settledRun(tenant, locationOf(again), 120_000)).toMatchObject({
      status: 'succeeded',
      outcome: 'form_filled',
    });
    // The portal never locked the user: the right password still signs in.
    expect((await portalSignIn(plainUser.username, plainUser.password)).status).not.toBe(423);
  }, 300_000);
});
