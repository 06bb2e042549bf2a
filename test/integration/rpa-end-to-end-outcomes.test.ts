import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MIN_LOOKUP_MS } from '#lib/portal/lookup-deadlines';
import { SANDBOX_HANG_MEMBER_ID, SANDBOX_MEMBERS, SANDBOX_PAYER_ID, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { call, newTenant, uniqueId } from '#test/support/api';
import { TEST_PORTAL_USERS } from '#test/support/portal-users';
import {
  allExecutions,
  createPortalAccount,
  createRequest,
  expectNoSecretsAnywhere,
  type FinishedRun,
  getRequest,
  locationOf,
  portalAccount,
  portalSignIn,
  settledBatch,
  sleep,
  startBatch,
  taskTimeoutSeconds,
} from './rpa-end-to-end-support.ts';
import { rpaOf } from './rpa-support.ts';

/*
 * The automation's named outcomes end to end (see rpa-end-to-end.test.ts for the setting): one
 * check-auth-status batch whose requests each meet another portal account or portal behaviour, so
 * that one execution (two browsers at a time) shows them all, each recorded on its run and, where a
 * login was attempted, as the account's lastLogin. The portal users that get refused are the test
 * stack's own (test/support/portal-users.ts).
 */
const [plainUser, totpUser] = SANDBOX_USERS;
const memberOf = (memberId: string) => SANDBOX_MEMBERS.find((member) => member.memberId === memberId)!;

/** Stored as the wrong-password account's password: a secret the scan must not find either. */
const wrongPassword = `wrong-${randomBytes(9).toString('hex')}`;

const finished: FinishedRun[] = [];
const executionArns: string[] = [];
/** The run whose portal never answered, as it read when its batch ended. */
let timedOut: { externalId: string; run: any } | undefined;

describe('named outcomes, end to end', () => {
  it('records each outcome on its run and each login on its account; a portal that never answers times out', async () => {
    const tenant = await newTenant('e2e-outcomes');
    // One payer per case, so that each request meets its own account.
    const accounts = [
      { externalId: 'plain', payerIds: [SANDBOX_PAYER_ID], username: plainUser.username, password: plainUser.password },
      // The portal that never answers gets an account (a session) of its own: a group shares its Task's fate.
      { externalId: 'plain-slow', payerIds: ['E2E-SLOW'], username: plainUser.username, password: plainUser.password },
      {
        externalId: 'wrong-password',
        payerIds: ['E2E-WRONG'],
        username: TEST_PORTAL_USERS.wrongPassword.username,
        password: wrongPassword,
      },
      {
        externalId: 'locked',
        payerIds: ['E2E-LOCKED'],
        username: TEST_PORTAL_USERS.locked.username,
        password: TEST_PORTAL_USERS.locked.password,
      },
      {
        externalId: 'totp',
        payerIds: ['E2E-TOTP'],
        username: totpUser.username,
        password: totpUser.password,
        totpSecret: totpUser.totpSecret,
      },
      {
        externalId: 'totp-unset',
        payerIds: ['E2E-NO-SECRET'],
        username: totpUser.username,
        password: totpUser.password,
      },
    ];
    for (const account of accounts) await createPortalAccount(tenant, account);

    // Someone at the front desk typed the locked user's password wrong three times: the portal locked it.
    const attempts = [];
    for (let i = 0; i < 3; i++) attempts.push((await portalSignIn(TEST_PORTAL_USERS.locked.username, 'typo')).status);
    expect(attempts).toEqual([401, 401, 423]);

    const sbx = memberOf('SBX-10001');
    const cases = {
      timeout: await createRequest(tenant, uniqueId('E2E-SLOW'), memberOf(SANDBOX_HANG_MEMBER_ID), 'E2E-SLOW'),
      wrongPassword: await createRequest(tenant, uniqueId('E2E-WRONG'), sbx, 'E2E-WRONG'),
      locked: await createRequest(tenant, uniqueId('E2E-LOCKED'), sbx, 'E2E-LOCKED'),
      totp: await createRequest(tenant, uniqueId('E2E-TOTP'), sbx, 'E2E-TOTP'),
      mfaRequired: await createRequest(tenant, uniqueId('E2E-MFA'), sbx, 'E2E-NO-SECRET'),
      neverSeen: await createRequest(tenant, uniqueId('E2E-NEW'), sbx, SANDBOX_PAYER_ID),
    };
    const ids = Object.values(cases);
    // A request no account serves (the organization has several) is refused before anything starts.
    const noAccount = await createRequest(tenant, uniqueId('E2E-NONE'), sbx, 'E2E-NOBODY');
    const refused = await startBatch(tenant, [...ids, noAccount]);
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.requests).toEqual([
      { requestExternalId: noAccount, reason: 'no_payer_match_several_accounts' },
    ]);
    const startedAt = new Date().toISOString();
    const started = await startBatch(tenant, ids);
    expect(started.status, started.text).toBe(202);
    executionArns.push(started.body.executionId);

    // The lookup the portal never answers holds one of the two slots for its own deadline: at least
    // MIN_LOOKUP_MS, and within its task's time (lib/portal/lookup-deadlines.ts); the batch still ends.
    const bound = (taskTimeoutSeconds + 60) * 1000;
    const begun = Date.now();
    const progress = await settledBatch(tenant, locationOf(started), bound);
    expect(Date.now() - begun).toBeLessThan(bound);
    expect(Date.now() - begun).toBeGreaterThanOrEqual(MIN_LOOKUP_MS);
    for (const item of progress.items) finished.push({ tenant, externalId: item.requestExternalId, runId: item.runId });
    const outcomes = Object.fromEntries(progress.items.map((item: any) => [item.requestExternalId, item]));
    const expected: Record<keyof typeof cases, { status: string; outcome: string; authorization: object | null }> = {
      timeout: { status: 'failed', outcome: 'portal_timeout', authorization: null },
      wrongPassword: { status: 'failed', outcome: 'wrong_password', authorization: null },
      locked: { status: 'failed', outcome: 'account_locked', authorization: null },
      totp: {
        status: 'succeeded',
        outcome: 'not_found_on_portal',
        authorization: { status: 'not_found', number: null, decisionDate: null },
      },
      mfaRequired: { status: 'failed', outcome: 'mfa_required', authorization: null },
      neverSeen: {
        status: 'succeeded',
        outcome: 'not_found_on_portal',
        authorization: { status: 'not_found', number: null, decisionDate: null },
      },
    };
    for (const [name, id] of Object.entries(cases)) {
      expect(outcomes[id], name).toEqual({
        requestExternalId: id,
        runId: expect.any(String),
        ...expected[name as keyof typeof cases],
      });
    }
    expect(progress).toMatchObject({ status: 'done', total: 6, done: 6, failed: 4 });
    const { description } = (await allExecutions()).find(
      (execution) => execution.executionArn === started.body.executionId,
    )!;
    expect(description.status).toBe('SUCCEEDED');

    // Each run says how it ended, in its last step, and which account it used.
    const runOf = async (id: string) =>
      (await call('GET', `${rpaOf(id)}/runs/${outcomes[id].runId}`, { apiKey: tenant.apiKey })).body;
    const usedAccounts: Record<keyof typeof cases, string | null> = {
      timeout: 'plain-slow',
      wrongPassword: 'wrong-password',
      locked: 'locked',
      totp: 'totp',
      mfaRequired: 'totp-unset',
      neverSeen: 'plain',
    };
    for (const [name, id] of Object.entries(cases) as Array<[keyof typeof cases, string]>) {
      const run = await runOf(id);
      expect(run, name).toMatchObject({
        status: expected[name].status,
        outcome: expected[name].outcome,
        portalAccountId: usedAccounts[name],
      });
      expect(run.steps.at(-1), name).toMatchObject({ detail: expected[name].outcome });
    }
    timedOut = { externalId: cases.timeout, run: await runOf(cases.timeout) };
    expect(timedOut.run.steps.slice(0, 5).map((step: { step: string }) => step.step)).toEqual([
      'queued',
      'portal account selected',
      'started',
      'credentials issued',
      'logged in',
    ]);
    expect(timedOut.run.steps.at(-1)).toEqual({
      at: expect.any(String),
      step: 'the portal did not answer in time',
      detail: 'portal_timeout',
    });

    // The lastLogin of every account a login was tried with.
    const lastLogins: Record<string, string> = {
      plain: 'succeeded',
      'wrong-password': 'failed',
      locked: 'locked',
      totp: 'succeeded',
      'totp-unset': 'mfa_required',
    };
    for (const [externalId, result] of Object.entries(lastLogins)) {
      const { lastLogin, attention } = await portalAccount(tenant, externalId);
      expect(lastLogin, externalId).toEqual({ result, at: expect.any(String) });
      expect(lastLogin.at >= startedAt, externalId).toBe(true);
      // A refused login marks the account: no automation logs in with it again until a client acts.
      const reasons: Record<string, string> = {
        'wrong-password': 'wrong_password',
        locked: 'account_locked',
        'totp-unset': 'mfa_required',
      };
      expect(attention, externalId).toEqual(
        reasons[externalId] ? { reason: reasons[externalId], since: lastLogin.at } : null,
      );
    }

    // Only the requests read on the portal changed.
    for (const [name, id] of Object.entries(cases) as Array<[keyof typeof cases, string]>) {
      const { authorization } = await getRequest(tenant, id);
      expect(authorization.status, name).toBe(expected[name].status === 'succeeded' ? 'not_found' : 'not_submitted');
    }

    // The locked user is still locked: the automation's right password changed nothing.
    expect((await portalSignIn(TEST_PORTAL_USERS.locked.username, TEST_PORTAL_USERS.locked.password)).status).toBe(423);
  });

  it('leaves no form of a password or a TOTP secret in executions, items, runs, sessions, screenshots or logs', async () => {
    expect(finished).toHaveLength(6);
    await expectNoSecretsAnywhere(
      {
        passwords: [wrongPassword, TEST_PORTAL_USERS.locked.password, totpUser.password, plainUser.password],
        totpSecrets: [totpUser.totpSecret],
      },
      finished,
      executionArns,
    );
    // The timed-out attempt went on until its own portal call gave up, a moment after the task's deadline
    // (each call is bounded by the time its invocation had left at login): it left the run as it was.
    const attemptStarted = Date.parse(timedOut!.run.steps[1].at);
    await sleep(attemptStarted + (taskTimeoutSeconds + 8) * 1000 - Date.now());
    const { tenant } = finished[0]!;
    const now = await call('GET', `${rpaOf(timedOut!.externalId)}/runs/${timedOut!.run.runId}`, {
      apiKey: tenant.apiKey,
    });
    expect(now.body).toEqual(timedOut!.run);
  });
});
