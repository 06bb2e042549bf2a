import { request } from 'node:http';
import { decodeJwt } from 'jose';
import type { Browser, Response as PageResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCRAPER_SESSION_COOKIE } from '#lib/http/scraper-credentials';
import { closeBrowser, launchBrowser } from '#lib/portal/browser';
import { scraperTokenKeys, scraperTokens } from '#lib/runs/scraper-token';
import { baseUrl, call, expectConforming, newTenant } from '#test/support/api';
import { newRequest, rpaOf, storedRun } from './rpa-support.ts';

/*
 * The scraper session's credentials on the local stack: a `?token=` link exchanged for a
 * path-scoped, HttpOnly, SameSite=Strict cookie (303 to the URL without the token), the cookie and
 * `Authorization: Bearer` after it, and tokens that end with the API key that asked for them.
 */
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let tenant: Tenant;
beforeAll(async () => {
  tenant = await newTenant('rpa-session');
});

const sessionPath = (id: string) => `${rpaOf(id)}/session`;

const accessToken = async (owner: Tenant, id: string, apiKey = owner.apiKey) => {
  const res = await call('POST', rpaOf(id), { apiKey, body: { clientUserId: owner.clientUserId } });
  expect(res.status, res.text).toBe(200);
  return res.body.accessToken as string;
};

/** A `?token=` link's first answer, not followed. */
const openLink = async (id: string, query: string) => {
  const response = await fetch(`${baseUrl}${sessionPath(id)}?${query}`, {
    redirect: 'manual',
    headers: { accept: 'text/html' },
  });
  await expectConforming('GET', sessionPath(id), response);
  return response;
};

/** The `name=value` of the one cookie a 303 sets. */
const cookieOf = (res: Response) => {
  const [line, ...others] = res.headers.getSetCookie();
  expect(others).toEqual([]);
  return line!.split(';')[0]!;
};

/** The session with the given credentials (a Cookie header value and/or a bearer token). */
const session = (id: string, { cookie, bearer, accept }: { cookie?: string; bearer?: string; accept?: string }) =>
  call('GET', sessionPath(id), {
    headers: {
      ...(cookie ? { cookie } : {}),
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(accept ? { accept } : {}),
    },
  });

/**
 * A GET with exactly these headers: fetch would put its own Sec-Fetch-Mode in place of a browser's
 * (and Sec-Fetch-* are what this test is about).
 */
const rawGet = (path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Headers; text: string }>((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => {
        const received = new Headers();
        for (const [name, value] of Object.entries(res.headers)) received.set(name, String(value));
        resolve({ status: res.statusCode!, headers: received, text });
      });
    });
    req.on('error', reject);
    req.end();
  });

const expect401 = (res: { status: number; headers: Headers; text: string }, label: string, id?: string) => {
  expect(res.status, label).toBe(401);
  expect(res.headers.get('content-type'), label).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('www-authenticate'), label).toMatch(/^Bearer realm="scraper-session"/);
  if (id) expect(res.text, label).not.toContain(id);
};

describe('a ?token= link: exchanged for the session cookie', () => {
  it('answers 303 to the URL without the token, setting a cookie for that session alone, no longer than the token', async () => {
    const id = await newRequest(tenant.apiKey);
    const token = await accessToken(tenant, id);
    const res = await openLink(id, `token=${token}`);

    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${baseUrl}${sessionPath(id)}`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('vary')).toBe('Accept, Authorization, Cookie');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await res.text()).toBe('');
    const [setCookie, ...more] = res.headers.getSetCookie();
    expect(more).toEqual([]);
    // Exactly these attributes: no Secure on the local http gateway (a browser would drop the cookie), no Domain.
    const match = new RegExp(
      `^${SCRAPER_SESSION_COOKIE}=([^;]+); Max-Age=(\\d+); Path=${sessionPath(id)}; HttpOnly; SameSite=Strict$`,
    ).exec(setCookie!);
    expect(match, setCookie).not.toBeNull();
    expect(match![1]).toBe(token);
    const maxAge = Number(match![2]);
    const remaining = decodeJwt(token).exp! - Date.now() / 1000;
    expect(maxAge).toBeLessThanOrEqual(remaining);
    expect(maxAge).toBeGreaterThan(remaining - 30);
  });

  it('keeps every other query parameter', async () => {
    const id = await newRequest(tenant.apiKey);
    const token = await accessToken(tenant, id);
    const res = await openLink(id, `view=full&token=${token}&lang=en%20US`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${baseUrl}${sessionPath(id)}?view=full&lang=en+US`);
  });

  it('answers 401 to an invalid ?token=, and sets no cookie', async () => {
    const id = await newRequest(tenant.apiKey);
    const forAnother = await accessToken(tenant, await newRequest(tenant.apiKey));
    for (const [label, query] of [
      ['empty', 'token='],
      ['malformed', 'token=not-a-token'],
      ['another request', `token=${forAnother}`],
    ] as const) {
      const res = await openLink(id, query);
      expect(res.status, label).toBe(401);
      expect(res.headers.getSetCookie(), label).toEqual([]);
      expect(res.headers.get('location'), label).toBeNull();
    }
  });

  it('opens the session with the cookie after the redirect: JSON by default, the page for a browser', async () => {
    const id = await newRequest(tenant.apiKey);
    const run = await storedRun(tenant, id, { status: 'running', outcome: undefined });
    const token = await accessToken(tenant, id);
    const link = await openLink(id, `token=${token}`);
    const cookie = cookieOf(link);
    const location = link.headers.get('location')!;

    const asJson = await fetch(location, { headers: { cookie, accept: 'application/json' } });
    await expectConforming('GET', location, asJson);
    expect(asJson.status).toBe(200);
    expect(asJson.headers.get('content-type')).toMatch(/^application\/json/);
    expect(asJson.headers.get('vary')).toBe('Accept, Authorization, Cookie');
    const body = (await asJson.json()) as { runs: Array<{ runId: string }> };
    expect(body).toMatchObject({ requestExternalId: id, clientUserId: tenant.clientUserId });
    expect(body.runs.map((shown) => shown.runId)).toEqual([run.runId]);

    const asHtml = await fetch(location, { headers: { cookie, accept: 'text/html' } });
    await expectConforming('GET', location, asHtml);
    expect(asHtml.status).toBe(200);
    expect(asHtml.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await asHtml.text();
    expect(html).toContain(run.runId);
    // The page reloads its own URL, which carries no token: the cookie goes with the reload.
    expect(html).toContain('<meta http-equiv="refresh" content="5">');
    expect(html).not.toContain(token);
  });

  it('takes Authorization: Bearer before the cookie', async () => {
    const id = await newRequest(tenant.apiKey);
    const token = await accessToken(tenant, id);
    const cookie = cookieOf(await openLink(id, `token=${token}`));
    const forAnother = await accessToken(tenant, await newRequest(tenant.apiKey));
    expect401(await session(id, { cookie, bearer: forAnother }), 'a valid cookie, a bearer for another request', id);
    expect((await session(id, { cookie: `${SCRAPER_SESSION_COOKIE}=junk`, bearer: token })).status).toBe(200);
  });

  it("refuses the cookie on another request's session, even of the same client and user (the token's req)", async () => {
    const id = await newRequest(tenant.apiKey);
    const other = await newRequest(tenant.apiKey);
    const cookie = cookieOf(await openLink(id, `token=${await accessToken(tenant, id)}`));
    expect((await session(id, { cookie })).status).toBe(200);
    expect401(await session(other, { cookie }), "the cookie sent to another request's session", other);
  });

  it("refuses an expired token's cookie", async () => {
    const id = await newRequest(tenant.apiKey);
    const expired = await scraperTokens(scraperTokenKeys, () => new Date(Date.now() - 16 * 60_000)).sign({
      clientId: tenant.clientId,
      keyId: tenant.keyId,
      clientUserId: tenant.clientUserId,
      requestExternalId: id,
    });
    expect401(await session(id, { cookie: `${SCRAPER_SESSION_COOKIE}=${expired.token}` }), 'expired', id);
  });

  it("gives a browser arriving from another site's link without the cookie a page that reloads itself, nothing more", async () => {
    const id = await newRequest(tenant.apiKey);
    await storedRun(tenant, id);
    const crossSite = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', accept: 'text/html' };
    const res = await rawGet(sessionPath(id), crossSite);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).toContain('<meta http-equiv="refresh" content="0">');
    expect(res.text).not.toContain(id);
    expect(res.text).not.toMatch(/\s(?:src|href)=/);
    // The reload our page starts is same-origin: without the cookie it is a plain 401, so there is no loop.
    const reload = { ...crossSite, 'sec-fetch-site': 'same-origin' };
    expect401(await rawGet(sessionPath(id), reload), 'same-origin, no cookie', id);
    expect401(await rawGet(sessionPath(id), { ...crossSite, accept: 'application/json' }), 'JSON', id);
  });
});

describe('tokens end with the API key that asked for them', () => {
  it('a revoked key: its tokens are 401 by bearer, cookie and link; another key’s tokens still work', async () => {
    const owner = await newTenant('rpa-session-revoke');
    const id = await newRequest(owner.apiKey);
    const second = await owner.admin.createApiKey(owner.clientId);
    const token = await accessToken(owner, id);
    const otherKeysToken = await accessToken(owner, id, second.apiKey);
    const cookie = cookieOf(await openLink(id, `token=${token}`));
    expect((await session(id, { bearer: token })).status).toBe(200);
    expect((await session(id, { cookie })).status).toBe(200);

    await owner.admin.revokeApiKey(owner.clientId, owner.keyId);
    expect401(await session(id, { bearer: token }), 'bearer', id);
    expect401(await session(id, { cookie }), 'cookie', id);
    const link = await openLink(id, `token=${token}`);
    expect(link.status).toBe(401);
    expect(link.headers.getSetCookie()).toEqual([]);
    expect((await session(id, { bearer: otherKeysToken })).status).toBe(200);
  });

  it('a deleted client: every token of it is 401', async () => {
    const owner = await newTenant('rpa-session-delete');
    const id = await newRequest(owner.apiKey);
    const token = await accessToken(owner, id);
    const cookie = cookieOf(await openLink(id, `token=${token}`));
    expect((await session(id, { cookie })).status).toBe(200);

    expect(await owner.admin.deleteClient(owner.clientId)).toMatchObject({ revokedKeys: 1 });
    expect401(await session(id, { bearer: token }), 'bearer', id);
    expect401(await session(id, { cookie }), 'cookie', id);
  });
});

describe('in headless Chromium, as a person following the link from the partner’s application', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 120_000);
  // One context per test, closed with the browser: Lambda's Chromium flags (--single-process) let closing a
  // context take the browser down with it.
  afterAll(async () => {
    if (browser) await closeBrowser(browser);
  });

  it('opens the session without the token in the URL, keeps it refreshing with the cookie, and nothing else gets it', async () => {
    const id = await newRequest(tenant.apiKey);
    const other = await newRequest(tenant.apiKey);
    const run = await storedRun(tenant, id, { status: 'running', outcome: undefined });
    const token = await accessToken(tenant, id);
    const scraperUri = `${baseUrl}${sessionPath(id)}`;

    const context = await browser.newContext();
    // The partner's application: another site, whose page links to the session with the token.
    const partner = 'http://partner.example/';
    await context.route(`${partner}**`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><a id="open" href="${scraperUri}?token=${token}">Open the scraper session</a>`,
      }),
    );
    const page = await context.newPage();
    const answers: PageResponse[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(`${baseUrl}/`)) answers.push(response);
    });
    await page.goto(partner);
    await page.click('#open');
    await page.getByText(run.runId).first().waitFor({ timeout: 15_000 });
    expect(page.url()).toBe(scraperUri);

    // The link's 303 set the cookie; the redirect, still from the partner's site, went without it (SameSite=Strict)
    // and got the page that reloads itself; that reload, our own, carried it.
    expect(answers.slice(0, 3).map((answer) => answer.status())).toEqual([303, 401, 200]);
    expect(await answers[2]!.request().headerValue('cookie')).toBe(`${SCRAPER_SESSION_COOKIE}=${token}`);
    const [cookie, ...others] = await context.cookies();
    expect(others).toEqual([]);
    expect(cookie).toMatchObject({
      name: SCRAPER_SESSION_COOKIE,
      value: token,
      domain: new URL(baseUrl).hostname,
      path: sessionPath(id),
      httpOnly: true,
      secure: false,
      sameSite: 'Strict',
    });
    expect(cookie!.expires).toBeLessThanOrEqual(decodeJwt(token).exp! + 1);
    // HttpOnly: no script of the page reads it.
    expect(await page.evaluate('document.cookie')).toBe('');

    // While the run is active the page reloads itself every 5 s, and the cookie goes with each reload.
    const reloaded = await page.waitForResponse((response) => response.url() === scraperUri, { timeout: 12_000 });
    expect(reloaded.status()).toBe(200);
    expect(await reloaded.request().headerValue('cookie')).toBe(`${SCRAPER_SESSION_COOKIE}=${token}`);

    // Another request's session, in another tab: the cookie's path does not reach it.
    const elsewhere = await (await context.newPage()).goto(`${baseUrl}${sessionPath(other)}`);
    expect(elsewhere!.status()).toBe(401);
    expect(await elsewhere!.request().headerValue('cookie')).toBeNull();
  });

  it('opens the session from a link pasted in the address bar: 303, then the page with the cookie', async () => {
    const id = await newRequest(tenant.apiKey);
    const run = await storedRun(tenant, id);
    const token = await accessToken(tenant, id);
    const context = await browser.newContext();
    const page = await context.newPage();
    const answers: PageResponse[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(`${baseUrl}${sessionPath(id)}`)) answers.push(response);
    });
    const landed = await page.goto(`${baseUrl}${sessionPath(id)}?token=${token}`);
    expect(landed!.status()).toBe(200);
    expect(page.url()).toBe(`${baseUrl}${sessionPath(id)}`);
    expect(await page.content()).toContain(run.runId);
    expect(answers.map((answer) => answer.status())).toEqual([303, 200]);
  });
});
