import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import chromium from '@sparticuz/chromium';
import { type Browser, chromium as playwrightChromium } from 'playwright-core';
import { onLambda } from '#lib/config/runtime';
import { PortalFailure } from './drivers/driver.ts';

/**
 * The headless Chromium the worker drives: the binary `@sparticuz/chromium` ships (the same on
 * this machine and in the Lambda worker), started through playwright-core with our own argument
 * list (chromiumArgs), never the package's `args`: those turn web security and site isolation off.
 * One browser per worker invocation; each portal session is a context of its own inside it
 * (drivers/portal-context.ts).
 */
export interface LaunchOptions {
  /** Another Chromium binary than the shipped one. */
  executablePath?: string;
  /** How long Chromium may take to start. */
  timeoutMs?: number;
  /** Everything in one process, as on Lambda (the default there, and only there). */
  singleProcess?: boolean;
}

/**
 * Never passed, whatever the environment: they switch off the same-origin policy, site isolation,
 * or mixed-content blocking, which keep a portal page's frames and scripts away from each other.
 * (Nor is `--disable-features=IsolateOrigins,site-per-process`: we pass no `--disable-features`.)
 */
export const FORBIDDEN_ARGS = [
  '--disable-web-security',
  '--disable-site-isolation-trials',
  '--allow-running-insecure-content',
] as const;

/**
 * What we add to playwright-core's own switches (which already turn off background networking,
 * component updates, sync, extensions and first-run, and add `--no-sandbox` unless
 * `chromiumSandbox` is set: see launchBrowser). Each entry says why it is here.
 */
export const chromiumArgs = ({ singleProcess }: { singleProcess: boolean }): string[] => [
  // No GPU on Lambda or here: rasterize through SwiftShader (software, shipped with the binary), as
  // @sparticuz/chromium does on Lambda. Chromium's other software path re-rasterizes around a changed
  // field, so a masked screenshot would still vary with a password's length (sandbox-driver.test.ts).
  '--use-gl=angle',
  '--use-angle=swiftshader',
  // No WebGL or WebGPU for pages (Playwright's --enable-unsafe-swiftshader would allow it): a portal
  // needs neither, and SwiftShader's shader compiler stays out of a page's reach.
  '--disable-3d-apis',
  // No hyperlink-auditing pings: a page must not make the browser send requests of its own choosing.
  '--no-pings',
  // WebRTC would send UDP around the context's proxy (drivers/refusing-proxy.ts): only proxied TCP.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ...(singleProcess
    ? [
        // Lambda: Chromium's multi-process mode hangs at the first page there (the sandboxed child
        // processes cannot start: `prctl(PR_SET_NO_NEW_PRIVS) failed`); @sparticuz/chromium keeps this
        // flag for that reason (Sparticuz/chromium#80, #81). Closing a context then ends the browser.
        '--single-process',
        // No zygote either: there is nothing to fork renderers from in one process.
        '--no-zygote',
      ]
    : []),
];

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

/** Browsers started with --single-process: closing one of their contexts would end them. */
const singleProcessBrowsers = new WeakSet<Browser>();

/** Whether the browser survives closing one of its contexts (not under --single-process). */
export const closesContextsSafely = (browser: Browser) => !singleProcessBrowsers.has(browser);

/** Starts Chromium, or throws PortalFailure('browser_failed'). */
export const launchBrowser = async (options: LaunchOptions = {}): Promise<Browser> => {
  const singleProcess = options.singleProcess ?? onLambda();
  try {
    const executablePath = options.executablePath ?? (await shippedExecutablePath());
    const browser = await playwrightChromium.launch({
      executablePath,
      args: chromiumArgs({ singleProcess }),
      headless: true,
      // Chromium's sandbox needs user namespaces or a setuid helper: Lambda has neither, and this machine
      // runs as root, where Chromium refuses it. Playwright adds --no-sandbox for `false`. What keeps a
      // portal page in its place instead: the context's origin pinning (drivers/portal-context.ts), and
      // a browser role that holds no secret (docs/security.md).
      chromiumSandbox: false,
      timeout: options.timeoutMs ?? 30_000,
    });
    if (singleProcess) singleProcessBrowsers.add(browser);
    return browser;
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
