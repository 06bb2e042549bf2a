import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBrowser, launchBrowser } from '#lib/portal/browser';
import { type PortalCredentials, PortalFailure } from '#lib/portal/drivers/driver';
import { driverFor, portalBaseUrl } from '#lib/portal/drivers/registry';
import { sandboxDriver } from '#lib/portal/drivers/sandbox';
import { maskedScreenshot } from '#lib/portal/drivers/screenshot';
import { priorAuthorizationFormOf } from '#lib/portal/prior-authorization-form';
import {
  SANDBOX_AUTHORIZATIONS,
  SANDBOX_DEMO_MEMBERS,
  SANDBOX_HANG_MEMBER_ID,
  SANDBOX_SERVICE_FROM_DATE,
  SANDBOX_USERS,
  sandboxSeed,
} from '#local/sandbox-portal/seed';
import { type SandboxPortal, startSandboxPortal } from '#local/sandbox-portal/server';
import { validRequest } from '#test/support/fixtures';

/** The sandbox driver in the real headless Chromium against the sandbox portal: one browser for the file. */
const [plainUser, totpUser] = SANDBOX_USERS;
const lockable = { username: 'lockable', password: 'lockable-password', totpSecret: null };
const TIMEOUT_MS = 10_000;
let browser: Browser;
let portal: SandboxPortal;

beforeAll(async () => {
  [browser, portal] = await Promise.all([
    launchBrowser(),
    startSandboxPortal({ seed: { ...sandboxSeed, users: [...sandboxSeed.users, lockable] } }),
  ]);
});
afterAll(async () => {
  await closeBrowser(browser);
  await portal.close();
});

const logIn = (credentials: PortalCredentials, options: { baseUrl?: string; timeoutMs?: number } = {}) =>
  sandboxDriver.logIn(browser, credentials, { baseUrl: portal.url, timeoutMs: TIMEOUT_MS, ...options });

/** The outcome a call fails with (and that it failed with a PortalFailure at all). */
const outcomeOf = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(PortalFailure);
  return (error as PortalFailure).outcome;
};

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('sandbox portal driver', () => {
  it('is the registered driver of the sandbox portal, at SANDBOX_PORTAL_URL', () => {
    expect(driverFor('sandbox')).toBe(sandboxDriver);
    expect(driverFor('availity')).toBeUndefined();
    expect(portalBaseUrl('sandbox', { SANDBOX_PORTAL_URL: portal.url })).toBe(portal.url);
    expect(portalBaseUrl('sandbox', {})).toBeUndefined();
  });

  it('fills the prior-authorization form with the request, reads back what the page holds, and never submits', async () => {
    const { externalId, ...document } = validRequest('RPA-FILL-1');
    document.renderingProviders.push({
      roleCode: 'FA',
      npi: '1234567893',
      lastName: 'Smith',
      firstName: 'Pat',
    } as never);
    document.diagnoses.push({ qualifierCode: 'ABF', code: 'G89.29' });
    const form = priorAuthorizationFormOf({ externalId, document });

    const session = await logIn({ username: plainUser.username, password: plainUser.password, totpSecret: null });
    try {
      const filled = await session.fillPriorAuthorization(form);
      const expected = {
        reference: 'RPA-FILL-1',
        'patient.memberId': 'MBR-0001',
        'patient.firstName': 'Ann',
        'patient.lastName': 'Example',
        'patient.birthDate': '1980-02-03',
        'patient.payerId': 'EHP01',
        'requestingProvider.npi': '1234567893',
        'requestingProvider.firstName': 'Jane',
        'requestingProvider.lastName': 'Doe',
        'requestingProvider.roleCode': '1P',
        'renderingProviders.0.organizationName': 'Example Imaging',
        'renderingProviders.0.roleCode': 'SJ',
        'renderingProviders.1.npi': '1234567893',
        'renderingProviders.1.firstName': 'Pat',
        'renderingProviders.1.lastName': 'Smith',
        'renderingProviders.1.roleCode': 'FA',
        serviceTypeCode: '1',
        placeOfServiceCode: '11',
        admissionTypeCode: '3',
        fromDate: '2026-12-01',
        toDate: '2026-12-31',
        'diagnoses.0.qualifierCode': 'ABK',
        'diagnoses.0.code': 'M54.5',
        'diagnoses.1.qualifierCode': 'ABF',
        'diagnoses.1.code': 'G89.29',
        'procedures.0.qualifierCode': 'HC',
        'procedures.0.code': '72148',
        'procedures.0.quantity': '1',
      };
      // What was typed (the request's non-blank values), and the page holding exactly that.
      expect(filled.typed).toEqual(expected);
      expect(filled.held).toEqual(expected);
      const image = await session.screenshot('form-filled');
      expect(image.subarray(0, 8)).toEqual(PNG_SIGNATURE);
      expect(image.length).toBeGreaterThan(10_000);
      expect(portal.submissions).toHaveLength(0);
    } finally {
      await session.close();
    }
  });

  it('blanks and masks password fields before a screenshot: the image does not depend on the password', async () => {
    const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
    try {
      const page = await context.newPage();
      await page.goto(`${portal.url}/login`);
      const blank = await maskedScreenshot(page);
      const images = [];
      // Two passwords of different lengths: neither its value nor its length may show.
      for (const password of [plainUser.password, 'x']) {
        await page.locator('#password').fill(password);
        expect(await page.locator('#password').inputValue()).toBe(password);
        images.push(await maskedScreenshot(page));
        expect(await page.locator('#password').inputValue()).toBe('');
      }
      expect(images[0]!.subarray(0, 8)).toEqual(PNG_SIGNATURE);
      expect(images[0]!.equals(blank)).toBe(true);
      expect(images[1]!.equals(blank)).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('reads approved (number, decision date), denied, pended and not found', async () => {
    const session = await logIn({ username: plainUser.username, password: plainUser.password, totpSecret: null });
    try {
      const [approved, denied] = SANDBOX_AUTHORIZATIONS;
      const read = (requestExternalId: keyof typeof SANDBOX_DEMO_MEMBERS) =>
        session.readAuthorizationStatus({
          memberId: SANDBOX_DEMO_MEMBERS[requestExternalId],
          requestExternalId,
          fromDate: SANDBOX_SERVICE_FROM_DATE,
        });
      expect(await read('DEMO-APPROVED')).toEqual({
        status: 'approved',
        number: approved.number,
        decisionDate: approved.decisionDate,
      });
      expect(await read('DEMO-DENIED')).toEqual({ status: 'denied', decisionDate: denied.decisionDate });
      expect(await read('DEMO-PENDED')).toEqual({ status: 'pended' });
      expect(await read('DEMO-UNKNOWN')).toEqual({ status: 'not_found' });
    } finally {
      await session.close();
    }
  });

  it('names a refused password wrong_password, and a locked account account_locked', async () => {
    const attempt = (password: string) => outcomeOf(logIn({ username: lockable.username, password, totpSecret: null }));
    expect(await attempt('wrong-1')).toBe('wrong_password');
    expect(await attempt('wrong-2')).toBe('wrong_password');
    expect(await attempt('wrong-3')).toBe('account_locked');
    expect(await attempt(lockable.password)).toBe('account_locked');
  });

  it('signs a TOTP account in with a code from its secret; without a secret it is mfa_required', async () => {
    const session = await logIn({ ...totpUser });
    try {
      expect(
        await session.readAuthorizationStatus({ memberId: 'SBX-10003', requestExternalId: 'DEMO-PENDED' }),
      ).toEqual({
        status: 'pended',
      });
    } finally {
      await session.close();
    }
    expect(await outcomeOf(logIn({ ...totpUser, totpSecret: null }))).toBe('mfa_required');
    expect(await outcomeOf(logIn({ ...totpUser, totpSecret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' }))).toBe(
      'wrong_password',
    );
    // One refused code is no lock: the account still signs in.
    await (await logIn({ ...totpUser })).close();
  });

  it('ends as portal_timeout within the timeout when the portal never answers, or cannot be reached', async () => {
    const hanging = await startSandboxPortal({ hangPaths: ['/login'] });
    try {
      const started = Date.now();
      const outcome = await outcomeOf(logIn({ ...plainUser }, { baseUrl: hanging.url, timeoutMs: 1_000 }));
      expect(outcome).toBe('portal_timeout');
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await hanging.close();
    }

    const session = await logIn({ ...plainUser }, { timeoutMs: 1_500 });
    try {
      const started = Date.now();
      const lookup = session.readAuthorizationStatus({ memberId: SANDBOX_HANG_MEMBER_ID, requestExternalId: 'ANY' });
      expect(await outcomeOf(lookup)).toBe('portal_timeout');
      expect(Date.now() - started).toBeLessThan(3_500);
    } finally {
      await session.close();
    }

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    expect(await outcomeOf(logIn({ ...plainUser }, { baseUrl: `http://127.0.0.1:${port}` }))).toBe('portal_timeout');
  });

  it('ends a call that hangs at its own deadline, abandons that page, and the next call reads on a fresh one, still signed in', async () => {
    const session = await logIn({ ...plainUser });
    try {
      // The session's one page (any earlier session's pages are closed).
      const [page, ...others] = browser.contexts().flatMap((context) => context.pages());
      expect(others).toEqual([]);
      const started = Date.now();
      const hung = await session
        .readAuthorizationStatus({ memberId: SANDBOX_HANG_MEMBER_ID, requestExternalId: 'ANY' }, { timeoutMs: 1_500 })
        .catch((error: unknown) => error);
      expect(hung).toMatchObject({ outcome: 'portal_timeout', hung: true });
      // The call's own 1.5 s, not the session's 10; the page it hung on is closed, and what waited on it with it.
      expect(Date.now() - started).toBeLessThan(1_500 + 5_000);
      expect(page!.isClosed()).toBe(true);
      // The same session, no new login: the portal answers the next lookup.
      expect(
        await session.readAuthorizationStatus({
          memberId: SANDBOX_DEMO_MEMBERS['DEMO-APPROVED'],
          requestExternalId: 'DEMO-APPROVED',
          fromDate: SANDBOX_SERVICE_FROM_DATE,
        }),
      ).toMatchObject({ status: 'approved' });
      expect((await session.screenshot('after', { timeoutMs: 5_000 })).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    } finally {
      await session.close();
    }
    // A portal that cannot be reached is a timeout too, but not a hang: nothing was left waiting.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await logIn({ ...plainUser }, { baseUrl: `http://127.0.0.1:${port}` }).catch(
      (error: unknown) => error,
    );
    expect(unreachable).toMatchObject({ outcome: 'portal_timeout', hung: false });
  });

  it('starts browsers that race for the first extraction of the shipped Chromium (no half-written binary)', async () => {
    const previous = process.env.TMPDIR;
    const fresh = mkdtempSync(join(tmpdir(), 'chromium-race-'));
    process.env.TMPDIR = fresh;
    try {
      const first = launchBrowser();
      await new Promise((resolve) => setTimeout(resolve, 200)); // the first is extracting by now
      const browsers = await Promise.all([first, launchBrowser()]);
      expect(existsSync(join(fresh, 'chromium'))).toBe(true);
      await Promise.all(browsers.map((started) => closeBrowser(started)));
    } finally {
      process.env.TMPDIR = previous;
      if (previous === undefined) delete process.env.TMPDIR;
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('names a browser that does not start browser_failed', async () => {
    const started = Date.now();
    expect(await outcomeOf(launchBrowser({ executablePath: '/nonexistent/chromium' }))).toBe('browser_failed');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
