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

describe('the sandbox portal’s operator', () => {
  const bearer = () => ({ authorization: `Bearer ${portal.operatorToken}` });
  const operatorPost = (path: string, form: Record<string, string>, headers: Record<string, string> = bearer()) =>
    fetch(`${portal.url}${path}`, { method: 'POST', redirect: 'manual', headers, body: new URLSearchParams(form) });
  const operatorPage = async () => {
    const response = await fetch(`${portal.url}/operator`, { headers: bearer() });
    expect(response.status).toBe(200);
    return response.text();
  };
  const rowOf = (page: string, reference: string) =>
    new RegExp(
      `<tr data-member-id="[^"]*" data-reference="${reference}" data-status="([a-z_]+)">([\\s\\S]*?)</tr>`,
    ).exec(page);
  const lookUp = async (memberId: string, reference: string) => {
    const cookie = await signIn(plainUser.username, plainUser.password);
    const csrf = csrfOf(await (await get('/authorizations/status', cookie)).text());
    const page = await (await post('/authorizations/status', { csrf, memberId, reference }, cookie)).text();
    return {
      status: /id="status-result" data-status="([a-z_]+)"/.exec(page)?.[1],
      number: /id="authorization-number">([^<]*)</.exec(page)?.[1],
      decisionDate: /id="decision-date">([^<]*)</.exec(page)?.[1],
    };
  };
  const created = async (reference: string, memberId = 'SBX-10003') => {
    const response = await operatorPost('/operator/authorizations', {
      memberId,
      reference,
      fromDate: SANDBOX_SERVICE_FROM_DATE,
    });
    expect(response.status, await response.clone().text()).toBe(303);
    expect(response.headers.get('location')).toBe('/operator');
    return { memberId, reference };
  };

  it('creates a pended authorization, decides it, and the status lookup shows the decision at once', async () => {
    const approved = await created('OPS-APPROVE');
    const denied = await created('OPS-DENY', 'SBX-10004');
    const partly = await created('OPS-PARTLY', 'SBX-10001');
    expect(await lookUp(approved.memberId, approved.reference)).toEqual({
      status: 'pended',
      number: undefined,
      decisionDate: undefined,
    });
    expect(rowOf(await operatorPage(), 'OPS-APPROVE')?.[1]).toBe('pended');

    const approve = await operatorPost('/operator/decisions', {
      ...approved,
      status: 'approved',
      number: 'SBX-AUTH-000201',
      decisionDate: '2026-03-10',
    });
    expect(approve.status).toBe(303);
    expect(await lookUp(approved.memberId, approved.reference)).toEqual({
      status: 'approved',
      number: 'SBX-AUTH-000201',
      decisionDate: '2026-03-10',
    });
    const partial = await operatorPost('/operator/decisions', {
      ...partly,
      status: 'partially_approved',
      number: 'SBX-AUTH-000202',
      decisionDate: '2026-03-10',
    });
    expect(partial.status).toBe(303);
    expect(await lookUp(partly.memberId, partly.reference)).toEqual({
      status: 'partially_approved',
      number: 'SBX-AUTH-000202',
      decisionDate: '2026-03-10',
    });
    const deny = await operatorPost('/operator/decisions', { ...denied, status: 'denied', decisionDate: '2026-03-11' });
    expect(deny.status).toBe(303);
    expect(await lookUp(denied.memberId, denied.reference)).toEqual({
      status: 'denied',
      number: undefined,
      decisionDate: '2026-03-11',
    });
    const page = await operatorPage();
    expect(rowOf(page, 'OPS-APPROVE')?.[1]).toBe('approved');
    expect(rowOf(page, 'OPS-APPROVE')?.[2]).toContain('SBX-AUTH-000201');
    // Only a pended authorization has a decide form.
    expect(rowOf(page, 'OPS-APPROVE')?.[2]).not.toContain('decide-form');
    expect(rowOf(page, 'DEMO-PENDED')?.[2]).toContain('class="decide-form"');
  });

  it('refuses bad input with a 4xx that says what to fix, and changes nothing', async () => {
    const pended = await created('OPS-REFUSED');
    const decision = { ...pended, status: 'approved', number: 'SBX-AUTH-1', decisionDate: '2026-03-10' };
    const cases: Array<[string, Record<string, string>, number, RegExp]> = [
      ['/operator/decisions', { ...decision, reference: 'NO-SUCH-REFERENCE' }, 404, /No authorization/],
      ['/operator/decisions', { ...decision, memberId: 'SBX-10001' }, 404, /No authorization/],
      ['/operator/decisions', { ...decision, status: 'pended' }, 400, /status must be one of/],
      ['/operator/decisions', { ...decision, status: 'APPROVED' }, 400, /status must be one of/],
      ['/operator/decisions', { ...decision, decisionDate: '2026-02-30' }, 400, /decisionDate/],
      ['/operator/decisions', { ...decision, decisionDate: '10/03/2026' }, 400, /decisionDate/],
      ['/operator/decisions', { ...decision, decisionDate: '' }, 400, /decisionDate/],
      ['/operator/decisions', { ...decision, number: '' }, 400, /authorization number/],
      ['/operator/decisions', { ...decision, status: 'partially_approved', number: '' }, 400, /authorization number/],
      ['/operator/decisions', { ...decision, number: '<b>1</b>' }, 400, /authorization number/],
      ['/operator/decisions', { ...decision, status: 'denied' }, 400, /denial has no authorization number/],
      ['/operator/decisions', { status: 'denied', decisionDate: '2026-03-10' }, 400, /memberId and reference/],
      ['/operator/decisions', { ...decision, memberId: 'SBX-10002', reference: 'DEMO-DENIED' }, 409, /denied already/],
      ['/operator/authorizations', { ...pended, fromDate: SANDBOX_SERVICE_FROM_DATE }, 409, /exists already/],
      ['/operator/authorizations', { memberId: 'SBX-00000', reference: 'X', fromDate: '2026-03-02' }, 400, /member/],
      ['/operator/authorizations', { memberId: 'SBX-10003', reference: 'X', fromDate: '2026-13-01' }, 400, /fromDate/],
      [
        '/operator/authorizations',
        { memberId: 'SBX-10003', reference: 'R'.repeat(129), fromDate: '2026-03-02' },
        400,
        /128/,
      ],
    ];
    for (const [path, form, status, message] of cases) {
      const response = await operatorPost(path, form);
      const page = await response.text();
      expect(response.status, `${path} ${JSON.stringify(form)}`).toBe(status);
      expect(/id="message" role="alert">([^<]*)</.exec(page)?.[1], JSON.stringify(form)).toMatch(message);
    }
    expect(await lookUp(pended.memberId, pended.reference)).toMatchObject({ status: 'pended' });
    expect((await lookUp('SBX-10002', 'DEMO-DENIED')).status).toBe('denied');
    const json = await fetch(`${portal.url}/operator/decisions`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify(decision),
    });
    expect(json.status).toBe(415);
    const wrongMethod = await fetch(`${portal.url}/operator/decisions`, { headers: bearer() });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
  });

  it('takes only its own token: not a portal user’s session, not a wrong token (401 before reading the form)', async () => {
    const pended = await created('OPS-AUTH');
    const decision = { ...pended, status: 'denied', decisionDate: '2026-03-10' };
    const userCookie = await signIn(plainUser.username, plainUser.password);
    const refusedHeaders: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: `Basic ${portal.operatorToken}` },
      { cookie: userCookie },
      { cookie: 'sandbox_operator=wrong' },
      // A wrong bearer is not saved by a right cookie.
      { authorization: 'Bearer wrong', cookie: `sandbox_operator=${portal.operatorToken}` },
    ];
    for (const headers of refusedHeaders) {
      const refused = await operatorPost('/operator/decisions', decision, headers);
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="sandbox-operator"');
      expect((await fetch(`${portal.url}/operator`, { headers })).status, JSON.stringify(headers)).toBe(401);
    }
    expect((await get('/operator?token=wrong')).status).toBe(401);
    expect((await lookUp(pended.memberId, pended.reference)).status).toBe('pended');
  });

  it('gives a browser a cookie for the operator link, and wants the page’s csrf token on its forms', async () => {
    const pended = await created('OPS-BROWSER');
    const link = await get(`/operator?token=${encodeURIComponent(portal.operatorToken)}`);
    expect(link.status).toBe(303);
    expect(link.headers.get('location')).toBe('/operator');
    const setCookie = link.headers.get('set-cookie')!;
    expect(setCookie).toBe(`sandbox_operator=${portal.operatorToken}; Path=/operator; HttpOnly; SameSite=Strict`);
    expect(portal.operatorUrl).toBe(`${portal.url}/operator?token=${portal.operatorToken}`);
    const cookie = cookieOf(link);

    const page = await get('/operator', cookie);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
    const html = await page.text();
    expect(html).toContain('data-page="operator"');
    expect(html).not.toContain(portal.operatorToken);
    // Ids and statuses only: the members' names stay on the portal's own pages.
    expect(html).not.toContain('Casey');
    const decision = { ...pended, status: 'approved', number: 'SBX-AUTH-000301', decisionDate: '2026-03-12' };
    expect((await operatorPost('/operator/decisions', decision, { cookie })).status).toBe(403);
    expect((await operatorPost('/operator/decisions', { ...decision, csrf: 'forged' }, { cookie })).status).toBe(403);
    const decided = await operatorPost('/operator/decisions', { ...decision, csrf: csrfOf(html) }, { cookie });
    expect(decided.status).toBe(303);
    expect(await lookUp(pended.memberId, pended.reference)).toEqual({
      status: 'approved',
      number: 'SBX-AUTH-000301',
      decisionDate: '2026-03-12',
    });
  });

  it('escapes what the operator typed', async () => {
    const hostile = '<script>alert("ref")</script>';
    await created(hostile);
    const page = await operatorPage();
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('data-reference="&lt;script&gt;alert(&quot;ref&quot;)&lt;/script&gt;"');
  });
});
