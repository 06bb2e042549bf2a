import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBrowser, launchBrowser } from '#lib/portal/browser';
import { openPortalContext } from '#lib/portal/drivers/portal-context';
import { closeWarmBrowsers, type WarmBrowser, warmBrowser } from '#lib/portal/warm-browser';
import { browserPids } from '#test/support/browser-processes';

/*
 * The browser worker's Chromium kept across warm invocations (lib/portal/warm-browser.ts), in the real
 * browser, both as here (contexts closed) and as on Lambda (--single-process: contexts emptied): one
 * launch for runs in a row, and nothing of one run (cookies, storage) in the next; a browser that
 * crashed is launched again.
 */

let portal: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  // /sign-in sets a session cookie and storage; /whoami answers with the cookies the browser sent.
  const server = createServer((req, res) => {
    if (req.url === '/sign-in') {
      res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'session=run-1; Path=/' });
      return res.end(
        // The title says when the database exists: opening it is asynchronous, and leaving the page first loses it.
        "<script>localStorage.setItem('member', 'M-1'); sessionStorage.setItem('tab', '1'); indexedDB.open('portal').onsuccess = () => { document.title = 'signed in'; }</script>",
      );
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`cookies: ${req.headers.cookie ?? ''}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  portal = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
});

afterAll(async () => {
  await closeWarmBrowsers();
  await portal.close();
});

/** One run's visit: a context of its own in the warm browser, closed at the end as a session closes it. */
async function visit<T>(warm: WarmBrowser, work: (page: import('playwright-core').Page) => Promise<T>): Promise<T> {
  const browser = await warm.acquire();
  const context = await openPortalContext(browser, { origins: [portal.url] });
  try {
    return await work(await context.context.newPage());
  } finally {
    await context.close();
    await warm.release(browser);
  }
}

/** What a run finds of the runs before it: the cookies sent, and the page's storage. */
const leftOver = (page: import('playwright-core').Page) =>
  page.goto(`${portal.url}/whoami`).then(async (response) => ({
    sent: await response!.text(),
    local: await page.evaluate(() => localStorage.getItem('member')),
    session: await page.evaluate(() => sessionStorage.getItem('tab')),
    databases: await page.evaluate(async () => {
      // The page's IndexedDB (this project's types have no DOM).
      type Databases = { indexedDB: { databases(): Promise<{ name?: string }[]> } };
      return (await (globalThis as unknown as Databases).indexedDB.databases()).map((db) => db.name);
    }),
  }));

describe.each([false, true])('a warm browser (single process: %s)', (singleProcess) => {
  it('launches once for runs in a row, and no run sees the cookies or storage of the one before', async () => {
    const warm = warmBrowser({ launch: () => launchBrowser({ singleProcess }), close: closeBrowser });
    try {
      const browsers: Browser[] = [];
      await visit(warm, async (page) => {
        browsers.push(page.context().browser()!);
        await page.goto(`${portal.url}/sign-in`);
        await page.waitForFunction(
          () => (globalThis as unknown as { document: { title: string } }).document.title === 'signed in',
        );
        expect(await leftOver(page)).toEqual({
          sent: 'cookies: session=run-1',
          local: 'M-1',
          session: '1',
          databases: ['portal'],
        });
      });
      const second = await visit(warm, async (page) => {
        browsers.push(page.context().browser()!);
        return leftOver(page);
      });
      expect(second).toEqual({ sent: 'cookies: ', local: null, session: null, databases: [] });
      expect(warm.launches).toBe(1);
      expect(browsers[1]).toBe(browsers[0]);
      expect(browsers[0]!.isConnected()).toBe(true);
    } finally {
      await warm.close();
    }
  });

  it('launches another when the browser crashed', async () => {
    const warm = warmBrowser({ launch: () => launchBrowser({ singleProcess }), close: closeBrowser });
    try {
      const before = new Set(browserPids());
      const first = await visit(warm, async (page) => page.context().browser()!);
      const [pid] = browserPids().filter((candidate) => !before.has(candidate));
      expect(pid).toBeDefined();
      process.kill(pid!, 'SIGKILL');
      await expect.poll(() => first.isConnected()).toBe(false);
      const { sent, browser } = await visit(warm, async (page) => ({
        sent: (await leftOver(page)).sent,
        browser: page.context().browser()!,
      }));
      expect(sent).toBe('cookies: ');
      expect(browser).not.toBe(first);
      expect(warm.launches).toBe(2);
    } finally {
      await warm.close();
    }
  });
});

it('retires a browser after its visits, once its last visit ends, and closes what it holds', async () => {
  const warm = warmBrowser({
    launch: () => launchBrowser({ singleProcess: true }),
    close: closeBrowser,
    visitsPerBrowser: 2,
  });
  const first = await warm.acquire();
  await warm.release(first);
  const still = await warm.acquire();
  expect(still).toBe(first);
  const next = await warm.acquire();
  expect(next).not.toBe(first);
  expect(first.isConnected()).toBe(true); // still in use by its second visit
  await warm.release(still);
  expect(first.isConnected()).toBe(false);
  await warm.release(next);
  await warm.close();
  expect(next.isConnected()).toBe(false);
  expect(warm.launches).toBe(2);
});

it('launches again after a launch failed', async () => {
  let fail = true;
  const warm = warmBrowser({
    launch: () => (fail ? Promise.reject(new Error('no Chromium')) : launchBrowser()),
    close: closeBrowser,
  });
  await expect(warm.acquire()).rejects.toThrow('no Chromium');
  fail = false;
  const browser = await warm.acquire();
  expect(browser.isConnected()).toBe(true);
  await warm.release(browser);
  await warm.close();
});
