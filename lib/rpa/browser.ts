import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import chromium from '@sparticuz/chromium';
import { type Browser, chromium as playwrightChromium } from 'playwright-core';
import { PortalFailure } from './drivers/driver.ts';

/**
 * The headless Chromium the worker drives: the binary `@sparticuz/chromium` ships (the same on
 * this machine and in the Lambda worker), started through playwright-core. One browser per worker
 * invocation; each portal session is a context of its own inside it.
 */
export interface LaunchOptions {
  /** Another Chromium binary than the shipped one. */
  executablePath?: string;
  /** How long Chromium may take to start. */
  timeoutMs?: number;
}

// Where @sparticuz/chromium extracts to (it reads tmpdir() on every call, so do these).
const extracted = () => join(tmpdir(), 'chromium');
const extracting = () => join(tmpdir(), 'chromium.extracting');
const EXTRACTION_LIMIT_MS = 120_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const exists = (path: string) => {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
};

/**
 * The shipped binary's path. The first call decompresses it to /tmp/chromium (seconds); the library
 * only checks that the file exists, so a second process starting meanwhile (parallel test files,
 * the local stack's worker) would run a half-written binary. A lock directory makes the others
 * wait for the one that extracts.
 */
const shippedExecutablePath = async (): Promise<string> => {
  const lock = extracting();
  if (exists(extracted()) && !exists(lock)) return chromium.executablePath();
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // A lock older than any extraction was left by a process that died while holding it.
    const since = exists(lock) ? Date.now() - statSync(lock).mtimeMs : 0;
    if (since > EXTRACTION_LIMIT_MS) rmSync(lock, { recursive: true, force: true });
    else if (Date.now() - started > EXTRACTION_LIMIT_MS) throw new Error('Chromium is still being extracted');
    else await sleep(100);
  }
  try {
    return await chromium.executablePath();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
};

/** Starts Chromium, or throws PortalFailure('browser_failed'). */
export const launchBrowser = async (options: LaunchOptions = {}): Promise<Browser> => {
  try {
    const executablePath = options.executablePath ?? (await shippedExecutablePath());
    return await playwrightChromium.launch({
      executablePath,
      args: chromium.args,
      headless: true,
      timeout: options.timeoutMs ?? 30_000,
    });
  } catch (error) {
    // The launcher's own message can be long (the browser's log); its first line says what failed.
    const reason = error instanceof Error ? (error.message.split('\n')[0] ?? '').slice(0, 200) : 'unknown error';
    throw new PortalFailure('browser_failed', `Chromium did not start: ${reason}`);
  }
};

/** Closes a browser without waiting more than `timeoutMs` and without throwing: the work is done by then. */
export const closeBrowser = async (browser: Browser, timeoutMs = 5_000) => {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    browser.close().catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    }),
  ]);
  clearTimeout(timer);
};

/** One browser for the duration of `work`, closed whatever happens. */
export const withBrowser = async <T>(
  work: (browser: Browser) => Promise<T>,
  options: LaunchOptions = {},
): Promise<T> => {
  const browser = await launchBrowser(options);
  try {
    return await work(browser);
  } finally {
    await closeBrowser(browser);
  }
};
