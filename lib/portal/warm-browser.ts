import type { Browser } from 'playwright-core';

/*
 * The browser worker's Chromium, kept across warm invocations: launched on first use in the execution
 * environment (or process, locally), shared by the visits under way, launched again when it died or
 * disconnected, closed on shutdown. Launching is 0.5 to 1 s of a run (docs/rpa.md, "Throughput").
 *
 * What stays per run: each visit opens a browser context of its own (drivers/portal-context.ts), with
 * its own cookies, storage and cache, and ends it when the session closes; nothing of one run or
 * account reaches another (test/integration/rpa-warm-browser.test.ts). Under --single-process (Lambda)
 * a context cannot be closed without ending the browser, so its pages are closed and its cookies
 * cleared instead; the empty contexts left behind are why a browser is retired after
 * `visitsPerBrowser` visits.
 */

export interface WarmBrowserOptions {
  launch: () => Promise<Browser>;
  close: (browser: Browser) => Promise<void>;
  /** Visits one browser serves before the next visit launches another (default 50). */
  visitsPerBrowser?: number;
}

export interface WarmBrowser {
  /** The running browser, launched now if there is none (or it died, or has served its visits). */
  acquire(): Promise<Browser>;
  /** The visit is over: its context is closed already; the browser stays up unless retired. */
  release(browser: Browser): Promise<void>;
  /** Closes the browser (after the visits under way, at most `close`'s own bound). */
  close(): Promise<void>;
  /** Browsers launched so far (the bench and the tests read it). */
  readonly launches: number;
}

interface Held {
  browser: Browser;
  visits: number;
  inUse: number;
  retired: boolean;
}

const VISITS_PER_BROWSER = 50;

/** Every warm browser of this process, so a local stack (or a SIGTERM) closes them all. */
const everyWarmBrowser = new Set<WarmBrowser>();

export function warmBrowser(options: WarmBrowserOptions): WarmBrowser {
  const limit = options.visitsPerBrowser ?? VISITS_PER_BROWSER;
  const held = new Map<Browser, Held>();
  let current: Promise<Held> | undefined;
  let launches = 0;

  /** Closed once its last visit ends; `close` never throws. */
  const retire = async (entry: Held) => {
    entry.retired = true;
    if (entry.inUse > 0 || !held.delete(entry.browser)) return;
    await options.close(entry.browser);
  };

  const launch = () => {
    launches++;
    const started = options.launch().then((browser) => {
      const entry: Held = { browser, visits: 0, inUse: 0, retired: false };
      held.set(browser, entry);
      return entry;
    });
    // A failed launch is not kept: the next visit tries again.
    started.catch(() => {
      if (current === started) current = undefined;
    });
    current = started;
    return started;
  };

  const usable = async (): Promise<Held> => {
    const entry = await (current ?? launch());
    if (entry.browser.isConnected() && !entry.retired && entry.visits < limit) return entry;
    // Crashed, disconnected or done: the next one takes its place; this one goes when its visits end.
    if (current && (await current) === entry) current = undefined;
    // Not waited for: a crashed browser's close can take its bound, and the next visit need not.
    void retire(entry);
    return usable();
  };

  const warm: WarmBrowser = {
    acquire: async () => {
      const entry = await usable();
      entry.visits++;
      entry.inUse++;
      return entry.browser;
    },
    release: async (browser) => {
      const entry = held.get(browser);
      if (!entry) return;
      entry.inUse--;
      if (entry.retired || !browser.isConnected()) await retire(entry);
    },
    close: async () => {
      const last = current;
      current = undefined;
      await last?.catch(() => undefined);
      await Promise.all([...held.values()].map((entry) => options.close(entry.browser)));
      held.clear();
    },
    get launches() {
      return launches;
    },
  };
  everyWarmBrowser.add(warm);
  return warm;
}

/** Browsers launched by every warm browser of this process (bench/rpa-batch.ts counts them). */
export function browserLaunches(): number {
  return [...everyWarmBrowser].reduce((total, warm) => total + warm.launches, 0);
}

/** Closes every warm browser of this process (local/stack.ts close(); a SIGTERM on Lambda). */
export async function closeWarmBrowsers(): Promise<void> {
  await Promise.all([...everyWarmBrowser].map((warm) => warm.close()));
}

/**
 * On Lambda the runtime gets a SIGTERM before the environment shuts down only when an extension is
 * registered (Lambda's "Extensions API", shutdown phase: 300 ms for the runtime, 500 ms with an internal
 * extension); the browser function registers none, so it is usually frozen and then ended without a
 * signal, Chromium with it (nothing outlives the microVM). When a signal does come, the browser is
 * closed, then the signal is raised again so the process ends as it would have without this listener.
 */
export function closeOnSigterm(): void {
  process.once('SIGTERM', () => {
    closeWarmBrowsers().finally(() => process.kill(process.pid, 'SIGTERM'));
  });
}
