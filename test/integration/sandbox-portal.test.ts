import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SANDBOX_AUTHORIZATIONS,
  SANDBOX_DEMO_MEMBERS,
  SANDBOX_HANG_MEMBER_ID,
  SANDBOX_SERVICE_FROM_DATE,
  SANDBOX_USERS,
  sandboxSeed,
} from '#local/sandbox-portal/seed';
import { type SandboxPortal, startSandboxPortal } from '#local/sandbox-portal/server';

/** The sandbox payer portal over plain HTTP, as a browser without scripts would use it. */
const [plainUser, totpUser] = SANDBOX_USERS;
const lockable = { username: 'lockable', password: 'lockable-password', totpSecret: null };
let portal: SandboxPortal;

beforeAll(async () => {
  portal = await startSandboxPortal({ seed: { ...sandboxSeed, users: [...sandboxSeed.users, lockable] } });
});
afterAll(() => portal.close());

const get = (path: string, cookie?: string) =>
  fetch(`${portal.url}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });

const post = (path: string, form: Record<string, string>, cookie?: string) =>
  fetch(`${portal.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: cookie ? { cookie } : {},
    body: new URLSearchParams(form),
  });

const cookieOf = (response: Response) => response.headers.get('set-cookie')!.split(';')[0]!;

const signIn = async (username: string, password: string) => {
  const response = await post('/login', { username, password });
  expect(response.status).toBe(303);
  return cookieOf(response);
};

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)![1]!;

const totp = (secret: string) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });

/** Codes are computed here and checked there: keep both in the same 30-second step. */
const awayFromStepBoundary = async () => {
  const intoStep = Date.now() % 30_000;
  if (intoStep > 28_000) await new Promise((resolve) => setTimeout(resolve, 30_000 - intoStep + 50));
};

describe('sandbox payer portal', () => {
  it('signs a user in with a session cookie (HttpOnly, SameSite=Strict) and keeps pages behind it', async () => {
    const loginPage = await get('/login');
    expect(loginPage.status).toBe(200);
    expect(loginPage.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(loginPage.headers.get('cache-control')).toBe('no-store');
    const html = await loginPage.text();
    expect(html).toContain('data-page="login"');
    expect(html).toMatch(/<input id="password" name="password" type="password"/);

    expect((await get('/home')).headers.get('location')).toBe('/login');

    const response = await post('/login', { username: plainUser.username, password: plainUser.password });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/home');
    const setCookie = response.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^sandbox_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');

    const home = await (await get('/home', cookieOf(response))).text();
    expect(home).toContain('data-page="home"');
    expect(home).toContain('id="prior-authorization-link" href="/prior-authorizations/new"');
    expect(home).toContain('id="status-lookup-link" href="/authorizations/status"');
    expect(home).not.toContain(plainUser.password);
  });

  it('says wrong_password, counts consecutive failures only, and locks after the third: then even the right password is refused', async () => {
    const attempt = (password: string) => post('/login', { username: lockable.username, password });
    const wrong = await attempt('not-it');
    expect(wrong.status).toBe(401);
    const page = await wrong.text();
    expect(page).toContain('data-error="wrong_password"');
    expect(page).not.toContain('not-it');

    expect((await attempt('not-it')).status).toBe(401);
    expect((await attempt(lockable.password)).status).toBe(303); // a success starts the count again
    expect((await attempt('not-it')).status).toBe(401);
    expect((await attempt('not-it')).status).toBe(401);

    const third = await attempt('not-it');
    expect(third.status).toBe(423);
    expect(await third.text()).toContain('data-error="account_locked"');
    const right = await attempt(lockable.password);
    expect(right.status).toBe(423);
    expect(right.headers.get('set-cookie')).toBeNull();
    expect(await right.text()).toContain('data-page="locked"');

    portal.unlock(lockable.username);
    expect((await attempt(lockable.password)).status).toBe(303);
  });

  it('answers an unknown username like a wrong password', async () => {
    const response = await post('/login', { username: 'nobody', password: 'x' });
    expect(response.status).toBe(401);
    expect(await response.text()).toContain('data-error="wrong_password"');
  });

  it('asks a TOTP user for a code (RFC 6238, ±1 step) before signing in', async () => {
    const generator = totp(totpUser.totpSecret);
    await awayFromStepBoundary();
    const halfway = await post('/login', { username: totpUser.username, password: totpUser.password });
    expect(halfway.headers.get('location')).toBe('/login/totp');
    const pending = cookieOf(halfway);
    expect((await get('/home', pending)).headers.get('location')).toBe('/login');
    expect(await (await get('/login/totp', pending)).text()).toContain('data-page="totp"');

    const invalid = ['000000', '111111', '222222'].find(
      (code) => generator.validate({ token: code, window: 1 }) === null,
    )!;
    const wrong = await post('/login/totp', { code: invalid }, pending);
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('data-error="wrong_code"');
    const stale = generator.generate({ timestamp: Date.now() - 90_000 });
    const tooOld = await post('/login/totp', { code: stale }, pending);
    expect(tooOld.status).toBe(401);

    const previousStep = generator.generate({ timestamp: Date.now() - 30_000 });
    const accepted = await post('/login/totp', { code: previousStep }, pending);
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe('/home');
    const signedIn = cookieOf(accepted);
    expect(signedIn).not.toBe(pending);
    expect((await get('/home', signedIn)).status).toBe(200);
    expect((await get('/home', pending)).status).toBe(303);

    // The two failures above were followed by a success: the account is not locked.
    const again = await post('/login', { username: totpUser.username, password: totpUser.password });
    expect(again.headers.get('location')).toBe('/login/totp');
  });

  it('looks statuses up by member id and reference: approved, denied, pended, not found', async () => {
    const cookie = await signIn(plainUser.username, plainUser.password);
    const csrf = csrfOf(await (await get('/authorizations/status', cookie)).text());
    const lookUp = async (memberId: string, reference: string, fromDate = '') => {
      const response = await post('/authorizations/status', { csrf, memberId, reference, fromDate }, cookie);
      expect(response.status).toBe(200);
      const page = await response.text();
      return {
        status: /id="status-result" data-status="([a-z_]+)"/.exec(page)?.[1],
        number: /id="authorization-number">([^<]*)</.exec(page)?.[1],
        decisionDate: /id="decision-date">([^<]*)</.exec(page)?.[1],
      };
    };
    const [approved, denied, pended] = SANDBOX_AUTHORIZATIONS;

    expect(await lookUp(SANDBOX_DEMO_MEMBERS['DEMO-APPROVED'], 'DEMO-APPROVED', SANDBOX_SERVICE_FROM_DATE)).toEqual({
      status: 'approved',
      number: approved.number,
      decisionDate: approved.decisionDate,
    });
    expect(await lookUp(SANDBOX_DEMO_MEMBERS['DEMO-DENIED'], 'DEMO-DENIED')).toEqual({
      status: 'denied',
      number: undefined,
      decisionDate: denied.decisionDate,
    });
    expect(await lookUp(pended.memberId, 'DEMO-PENDED')).toEqual({
      status: 'pended',
      number: undefined,
      decisionDate: undefined,
    });
    expect((await lookUp(SANDBOX_DEMO_MEMBERS['DEMO-UNKNOWN'], 'DEMO-UNKNOWN')).status).toBe('not_found');
    // Another member's reference, or another date of service, finds nothing.
    expect((await lookUp(SANDBOX_DEMO_MEMBERS['DEMO-DENIED'], 'DEMO-APPROVED')).status).toBe('not_found');
    expect((await lookUp(approved.memberId, 'DEMO-APPROVED', '2026-03-03')).status).toBe('not_found');

    const forged = await post(
      '/authorizations/status',
      { csrf: 'x', memberId: approved.memberId, reference: 'DEMO-APPROVED' },
      cookie,
    );
    expect(forged.status).toBe(403);
  });

  it('escapes everything it renders back, and records a submitted form', async () => {
    const cookie = await signIn(plainUser.username, plainUser.password);
    const form = await (await get('/prior-authorizations/new', cookie)).text();
    expect(form).toContain('id="prior-authorization-form"');
    expect(form).toContain('<button id="submit-prior-authorization" type="submit">');
    const hostile = '<script>alert("phi")</script>';
    const quote = '" autofocus onfocus="alert(1)';
    const response = await post(
      '/prior-authorizations',
      {
        csrf: csrfOf(form),
        reference: 'ESC-1',
        'patient.memberId': 'SBX-10004',
        'patient.firstName': hostile,
        'patient.lastName': quote,
        fromDate: '2026-05-01',
        'diagnoses.1.code': "O'Brien & <b>",
      },
      cookie,
    );
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('id="submission-confirmation"');
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('" autofocus');
    expect(page).toContain('value="&lt;script&gt;alert(&quot;phi&quot;)&lt;/script&gt;"');
    expect(page).toContain('value="&quot; autofocus onfocus=&quot;alert(1)"');
    expect(page).toContain('value="O&#39;Brien &amp; &lt;b&gt;"');
    expect(page).toContain('name="diagnoses.1.code"'); // the second row is rendered back
    expect(portal.submissions.map((submission) => submission.values['patient.firstName'])).toEqual([hostile]);

    const lookup = await (await get('/authorizations/status', cookie)).text();
    const echoed = await (
      await post('/authorizations/status', { csrf: csrfOf(lookup), memberId: hostile, reference: quote }, cookie)
    ).text();
    expect(echoed).not.toContain('<script>alert');
    expect(echoed).toContain('value="&lt;script&gt;alert(&quot;phi&quot;)&lt;/script&gt;"');
    expect(echoed).toContain('data-status="not_found"');
  });

  it('refuses what is not a form, and unknown pages', async () => {
    const json = await fetch(`${portal.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(415);
    const huge = await post('/login', { username: 'x'.repeat(70_000), password: 'y' });
    expect(huge.status).toBe(413);
    expect((await get('/nowhere')).status).toBe(404);
    const wrongMethod = await get('/logout');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
  });

  it('never answers the hang switches, and still closes at once', async () => {
    const hanging = await startSandboxPortal({ hangPaths: ['/login'] });
    const started = Date.now();
    await expect(fetch(`${hanging.url}/login`, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    const inFlight = fetch(`${hanging.url}/login`).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await hanging.close();
    expect(await inFlight).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(2_000);

    const cookie = await signIn(plainUser.username, plainUser.password);
    const csrf = csrfOf(await (await get('/authorizations/status', cookie)).text());
    const slow = fetch(`${portal.url}/authorizations/status`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ csrf, memberId: SANDBOX_HANG_MEMBER_ID, reference: 'ANY' }),
      signal: AbortSignal.timeout(300),
    });
    await expect(slow).rejects.toThrow(/aborted|timeout/i);
  });
});
