import { createServer, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBrowser, launchBrowser } from '#lib/portal/browser';
import { PortalFailure } from '#lib/portal/drivers/driver';
import { openPortalContext, type PortalContext } from '#lib/portal/drivers/portal-context';
import { browserPids } from '#test/support/browser-processes';

/*
 * Each layer of a portal's browser context (lib/portal/drivers/portal-context.ts) on its own, in the real
 * Chromium: rpa-origin-pinning.test.ts shows that together they keep a hostile portal from every other
 * origin, where one layer covers for another; here each does what it alone is there for. Pages of our
 * own servers, no local stack.
 */

type Answer = { status?: number; headers?: OutgoingHttpHeaders; body?: string } | 'never';

/** A loopback server answering by path; `never` leaves the request waiting. */
const serve = async (answer: (path: string) => Answer) => {
  const server = createServer((req, res) => {
    const answered = answer(req.url ?? '/');
    if (answered === 'never') return;
    res.writeHead(answered.status ?? 200, { 'content-type': 'text/html', ...answered.headers });
    res.end(answered.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
type Server = Awaited<ReturnType<typeof serve>>;

const UNEXPECTED_ORIGIN = 'The portal led the browser outside its registered origins.';

let portal: Server;
let second: Server;
let foreign: Server;
let browser: Browser;

beforeAll(async () => {
  foreign = await serve(() => ({ body: '<p>elsewhere</p>' }));
  second = await serve(() => ({
    headers: { 'content-type': 'image/svg+xml' },
    body: '<svg xmlns="http://www.w3.org/2000/svg"/>',
  }));
  portal = await serve((path) => {
    if (path === '/download') {
      return {
        headers: { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment' },
        body: 'x',
      };
    }
    if (path === '/slow') return 'never';
    if (path === '/cookie') return { headers: { 'set-cookie': 'session=1; Path=/' }, body: '<p>signed in</p>' };
    const form = new URL(path, 'http://portal').searchParams;
    const action = form.get('action') ?? '/sign-in';
    const formaction = form.get('formaction');
    return {
      body: `<body>
<img src="${second.url}/logo.svg"><img src="${foreign.url}/pixel.png">
<iframe srcdoc="<p>help</p>"></iframe><iframe src="about:blank"></iframe>${form.get('frame') ? `<iframe src="${form.get('frame')}"></iframe>` : ''}
<form id="sign-in" method="post" action="${action}"><input name="password"><button>Sign in</button>${formaction ? `<button formaction="${formaction}">Other</button>` : ''}</form>
<script>
// A frame of the portal still loading when the credential is typed: no address yet.
addEventListener('load', () => { const frame = document.createElement('iframe'); frame.src = '/slow'; document.body.append(frame); });
</script></body>`,
    };
  });
  browser = await launchBrowser({ singleProcess: false });
});

afterAll(async () => {
  await closeBrowser(browser);
  await Promise.all([portal, second, foreign].map((server) => server.close()));
});

/** A context on the portal's two origins with one page, closed after `use`. */
const withPortal = async (use: (context: PortalContext, page: Page) => Promise<void>, on: Browser = browser) => {
  const context = await openPortalContext(on, { origins: [portal.url, second.url] });
  try {
    await use(context, await context.context.newPage());
  } finally {
    await context.close();
  }
};

const failureOf = async (work: Promise<unknown>) => {
  const error = await work.then(
    () => expect.unreachable('no failure'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PortalFailure);
  return error as PortalFailure;
};

describe('a portal context', () => {
  it('opens on http and https origins only', async () => {
    for (const origins of [[], ['ftp://127.0.0.1/'], ['https://portal.example.com', 'file:///etc/passwd']]) {
      const failure = await failureOf(openPortalContext(browser, { origins }));
      expect([failure.outcome, failure.message]).toEqual([
        'portal_error',
        "The portal's origins are not http or https addresses.",
      ]);
    }
    for (const origins of [
      ['https://portal.example.com'],
      ['http://portal.example.com', 'https://portal.example.com:8443'],
    ]) {
      const context = await openPortalContext(browser, { origins });
      await context.close();
    }
  });

  it('reaches every one of its origins, and aborts anything for another before the proxy sees it', async () => {
    await withPortal(async (context, page) => {
      const answered: Record<string, number> = {};
      const failed: Record<string, string | undefined> = {};
      page.on('response', (response) => {
        answered[new URL(response.url()).origin] = response.status();
      });
      page.on('requestfailed', (request) => {
        failed[new URL(request.url()).origin] = request.failure()?.errorText;
      });
      await page.goto(`${portal.url}/`);
      await expect.poll(() => Object.keys(failed)).toEqual([foreign.url]);
      expect(answered).toEqual({ [portal.url]: 200, [second.url]: 200 });
      // Our route filter's refusal, not the refusing proxy's 403: the request never left the browser.
      expect(failed[foreign.url]).toMatch(/ERR_BLOCKED_BY_CLIENT/);
      // A picture elsewhere is no reason to end the session.
      expect(context.strayed).toBe(false);
    });
  });

  it('takes no downloads', async () => {
    await withPortal(async (_, page) => {
      const download = page.waitForEvent('download');
      await page.goto(`${portal.url}/download`).catch(() => undefined);
      expect(await (await download).failure()).not.toBeNull();
    });
  });

  describe('before a credential is typed', () => {
    it('lets it go to a page, frames and form of the portal (frames without an address of their own included)', async () => {
      await withPortal(async (context, page) => {
        await page.goto(`${portal.url}/?formaction=${encodeURIComponent(`${second.url}/sign-in`)}`);
        await expect.poll(() => page.frames().map((frame) => frame.url())).toContain('');
        expect(page.frames().map((frame) => frame.url())).toEqual(
          expect.arrayContaining([
            `${portal.url}/?formaction=${encodeURIComponent(`${second.url}/sign-in`)}`,
            'about:srcdoc',
            'about:blank',
            '',
          ]),
        );
        await context.checkCredentialTarget(page, '#sign-in');
        expect(context.strayed).toBe(false);
      });
    });

    it.each([
      ['a form posting elsewhere', (foreignUrl: string) => `/?action=${encodeURIComponent(`${foreignUrl}/steal`)}`],
      [
        'a button posting elsewhere',
        (foreignUrl: string) => `/?formaction=${encodeURIComponent(`${foreignUrl}/steal`)}`,
      ],
      // No request at all, so neither the route filter nor the proxy sees it.
      ['a frame of a data: address', () => `/?frame=${encodeURIComponent('data:text/html,<p>sign in here</p>')}`],
    ])('refuses %s, and ends the session', async (_, path) => {
      await withPortal(async (context, page) => {
        await page.goto(`${portal.url}${path(foreign.url)}`);
        expect(context.strayed).toBe(false);
        const failure = await failureOf(context.checkCredentialTarget(page, '#sign-in'));
        expect([failure.outcome, failure.message]).toEqual(['unexpected_origin', UNEXPECTED_ORIGIN]);
        expect(context.strayed).toBe(true);
        await expect.poll(() => page.isClosed()).toBe(true);
      });
    });

    it('refuses a page that is not the portal’s, though nothing was requested for it', async () => {
      await withPortal(async (context, page) => {
        await page.goto('data:text/html,<form id="sign-in"><input name="password"></form>');
        expect(context.strayed).toBe(false);
        expect((await failureOf(context.checkCredentialTarget(page, '#sign-in'))).outcome).toBe('unexpected_origin');
        expect(context.strayed).toBe(true);
      });
    });
  });

  it('once led elsewhere, closes its pages at once and fails every later check', async () => {
    await withPortal(async (context, page) => {
      await page.goto(`${portal.url}/`);
      await page.goto(`${foreign.url}/`).catch(() => undefined);
      await expect.poll(() => page.isClosed()).toBe(true);
      expect(context.strayed).toBe(true);
      const failure = await failureOf(context.whenStrayed);
      expect([failure.outcome, failure.message]).toEqual(['unexpected_origin', UNEXPECTED_ORIGIN]);
      const another = await context.context.newPage();
      await another.goto(`${portal.url}/`);
      expect(() => context.checkPage(another)).toThrow(UNEXPECTED_ORIGIN);
    });
  });

  it('closes the context, leaving the browser up', async () => {
    const context = await openPortalContext(browser, { origins: [portal.url] });
    await context.context.newPage();
    await context.close();
    expect(browser.contexts()).not.toContain(context.context);
    expect(browser.isConnected()).toBe(true);
  });

  it('under --single-process, closes the pages and clears the cookies instead (closing the context ends that browser)', async () => {
    const single = await launchBrowser({ singleProcess: true });
    try {
      const context = await openPortalContext(single, { origins: [portal.url] });
      const page = await context.context.newPage();
      await page.goto(`${portal.url}/cookie`);
      expect(await context.context.cookies()).toHaveLength(1);
      await context.close();
      expect(page.isClosed()).toBe(true);
      expect(await context.context.cookies()).toEqual([]);
      expect(single.isConnected()).toBe(true);
    } finally {
      await closeBrowser(single);
    }
  });

  it('under --single-process, closes the browser when the origins cannot be cleared (no later run may meet their data)', async () => {
    const single = await launchBrowser({ singleProcess: true });
    try {
      const context = await openPortalContext(single, { origins: [portal.url] });
      await (await context.context.newPage()).goto(`${portal.url}/cookie`);
      // The page the clearing needs cannot be opened.
      context.context.newPage = () => Promise.reject(new Error('no page'));
      await context.close();
      expect(single.isConnected()).toBe(false);
    } finally {
      await closeBrowser(single);
    }
  });

  it('closes within seconds when the browser does not answer', async () => {
    const pids = new Set(browserPids());
    const frozen = await launchBrowser({ singleProcess: false });
    const [pid] = browserPids().filter((candidate) => !pids.has(candidate));
    expect(pid).toBeDefined();
    let closedInTime = false;
    try {
      const context = await openPortalContext(frozen, { origins: [portal.url] });
      await context.context.newPage();
      process.kill(pid!, 'SIGSTOP');
      // Raced against a limit of the test's own, so the browser is resumed and closed even if close() never returns.
      closedInTime = await Promise.race([
        context.close().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000)),
      ]);
    } finally {
      process.kill(pid!, 'SIGCONT');
      await closeBrowser(frozen);
    }
    expect(closedInTime).toBe(true);
  });

  it('fails with the browser’s own error when it cannot open', async () => {
    const gone = await launchBrowser({ singleProcess: false });
    await closeBrowser(gone);
    const error = await openPortalContext(gone, { origins: [portal.url] }).then(
      () => expect.unreachable('opened'),
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(TypeError);
    expect(String(error)).toMatch(/closed/);
  });
});
