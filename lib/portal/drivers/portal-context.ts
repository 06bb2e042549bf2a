import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { closesContextsSafely } from '#lib/portal/browser';
import { PortalFailure } from './driver.ts';
import { type RefusingProxy, startRefusingProxy } from './refusing-proxy.ts';

/**
 * The browser context every driver works in: it reaches the portal's registered origins and
 * nothing else, and a credential is typed only into a page of those origins whose form posts to
 * one of them (docs/sandbox-portal.md, "Origin pinning"). Three layers, each catching what the one
 * before cannot see:
 *
 * 1. A route filter aborts every request for another origin (Playwright routes each request but a
 *    redirect's next hop).
 * 2. The context's proxy is one that refuses everything (refusing-proxy.ts), and only the portal's
 *    origins bypass it (Chromium's bypass rules match scheme, host and port): a redirect hop to any
 *    other origin, a WebSocket, anything the route filter is not shown, is refused before a
 *    connection to it exists.
 * 3. Before each credential is typed: the page, its frames, and where its form would post must be
 *    the portal's.
 *
 * A navigation for another origin (a page, a popup, a frame, or a redirect's next hop: Playwright
 * reports those as requests even though it does not route them), or a check that finds the page
 * elsewhere, means the portal led the browser away: the context is marked, its pages are closed at
 * once (whatever waited on them fails now, not at its timeout), and the driver's call ends with
 * `unexpected_origin`. Anything else for another origin (an analytics script, a font, a beacon, a
 * WebSocket) is only blocked: a portal may reference such things, but they never load.
 */
export interface PortalContext {
  context: BrowserContext;
  /** The portal led the browser outside its origins at some point. */
  readonly strayed: boolean;
  /** Rejects with `unexpected_origin` the moment the portal leads elsewhere: a driver races its calls against it. */
  readonly whenStrayed: Promise<never>;
  /** Throws `unexpected_origin` unless the page is on the portal's origins and nothing has strayed. */
  checkPage(page: Page): void;
  /**
   * Throws `unexpected_origin` unless the page, every frame in it, and every address the form
   * (matched by `formSelector`) could submit to are the portal's. Waits for the page's `load` first,
   * so its frames have been requested (and refused) by then. Call it right before typing a credential.
   */
  checkCredentialTarget(page: Page, formSelector: string): Promise<void>;
  /** Closes the context (or, under --single-process, its pages and cookies) and the proxy; never throws. */
  close(): Promise<void>;
}

export interface PortalContextOptions {
  /** The driver's `origins(baseUrl)`. */
  origins: readonly string[];
  /** How the portal is shown: viewport, locale, time zone. */
  display?: Pick<BrowserContextOptions, 'viewport' | 'locale' | 'timezoneId'>;
}

const CLOSE_MS = 5_000;
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** A proxy bypass rule for exactly one origin: scheme, host and port (Chromium's `[scheme://]host[:port]`). */
const bypassRuleOf = (origin: URL) =>
  `${origin.protocol}//${origin.hostname}:${origin.port || DEFAULT_PORTS[origin.protocol]}`;
/** Frames without an address of their own: they are the page's. */
const LOCAL_FRAME_URLS = new Set(['', 'about:blank', 'about:srcdoc']);

/** The failure: our words, never the address (it can carry anything the page put in it). */
export const unexpectedOrigin = () =>
  new PortalFailure('unexpected_origin', 'The portal led the browser outside its registered origins.');

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/** Every address a form could be submitted to: its action and its submit buttons' formaction. */
const submitTargets = (page: Page, formSelector: string) =>
  // Stryker disable all: the function runs in the page, which has none of the mutation switches it would call.
  page.locator(formSelector).evaluate((form) => {
    type Submitter = { hasAttribute(name: string): boolean; formAction: string };
    const { action, elements } = form as unknown as { action: string; elements: ArrayLike<Submitter> };
    const overrides = Array.from(elements).filter((element) => element.hasAttribute('formaction'));
    return [action, ...overrides.map((element) => element.formAction)];
  });
// Stryker restore all

const bounded = (work: Promise<unknown>) =>
  Promise.race([work.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, CLOSE_MS).unref())]);

/** Every kind of data the portal's origins hold (cookies, storage, IndexedDB, caches, service workers). */
async function clearOrigins(context: BrowserContext, origins: readonly string[]): Promise<true> {
  // A page of its own: the session's may be closing (a context that strayed closes its pages).
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  for (const origin of origins) await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' });
  await cdp.detach();
  return true;
}

/**
 * Under --single-process, closing a context takes the browser down, and its contexts share one storage
 * (localStorage and IndexedDB are seen from the next context: rpa-warm-browser.test.ts); the browser
 * outlives the run (warm-browser.ts). So the portal's origins are cleared of everything, then the pages
 * and cookies go; a browser that could not be cleared is closed, so that no later run meets its data.
 */
async function emptyContext(browser: Browser, context: BrowserContext, origins: readonly string[]): Promise<void> {
  const cleared = (await bounded(clearOrigins(context, origins))) === true;
  await bounded(Promise.all([...context.pages().map((page) => page.close()), context.clearCookies()]));
  if (!cleared) await bounded(browser.close());
}

export const openPortalContext = async (browser: Browser, options: PortalContextOptions): Promise<PortalContext> => {
  const origins = options.origins.map((origin) => new URL(origin));
  if (origins.length === 0 || origins.some((origin) => !DEFAULT_PORTS[origin.protocol])) {
    throw new PortalFailure('portal_error', "The portal's origins are not http or https addresses.");
  }
  const allowed = new Set(origins.map((origin) => origin.origin));
  const onPortal = (url: string) => allowed.has(originOf(url) ?? '');
  let strayed = false;
  let context: BrowserContext | undefined;
  let rejectStrayed: (failure: PortalFailure) => void = () => undefined;
  const whenStrayed = new Promise<never>((_, reject) => {
    rejectStrayed = reject;
  });
  // Nobody may be racing against it when it rejects.
  whenStrayed.catch(() => undefined);

  const stray = () => {
    if (!strayed) rejectStrayed(unexpectedOrigin());
    strayed = true;
    for (const page of context?.pages() ?? []) page.close().catch(() => undefined);
  };

  const proxy: RefusingProxy = await startRefusingProxy();
  try {
    context = await browser.newContext({
      ...options.display,
      proxy: { server: proxy.server, bypass: origins.map(bypassRuleOf).join(',') },
      acceptDownloads: false,
      serviceWorkers: 'block',
    });
  } catch (error) {
    await proxy.close();
    throw error;
  }
  const opened = context;
  opened.on('dialog', (dialog) => dialog.dismiss().catch(() => undefined));
  // A redirect's next hop is not routed, but is reported: a page or frame headed elsewhere strays.
  opened.on('request', (request) => {
    if (request.isNavigationRequest() && !onPortal(request.url())) stray();
  });
  await opened.route('**/*', async (route) => {
    const request = route.request();
    if (onPortal(request.url())) return route.continue().catch(() => undefined);
    // Only a navigation (page, popup, frame) means the portal leads elsewhere; a stray image does not.
    if (request.isNavigationRequest()) stray();
    await route.abort('blockedbyclient').catch(() => undefined);
  });

  return {
    context: opened,
    get strayed() {
      return strayed;
    },
    whenStrayed,
    checkPage: (page) => {
      if (strayed || !onPortal(page.url())) throw unexpectedOrigin();
    },
    checkCredentialTarget: async (page, formSelector) => {
      await page.waitForLoadState('load');
      const targets = await submitTargets(page, formSelector);
      const frames = page.frames().map((frame) => frame.url());
      const elsewhere =
        !onPortal(page.url()) ||
        frames.some((url) => !LOCAL_FRAME_URLS.has(url) && !onPortal(url)) ||
        targets.some((url) => !onPortal(url));
      if (elsewhere) stray();
      if (strayed) throw unexpectedOrigin();
    },
    close: async () => {
      if (closesContextsSafely(browser)) await bounded(opened.close());
      else await emptyContext(browser, opened, [...allowed]);
      await bounded(proxy.close());
    },
  };
};
