import { type Browser, PortalFailure } from './drivers/driver.ts';

/**
 * PLACEHOLDER for the portal branch's launcher (headless Chromium from `@sparticuz/chromium` through
 * playwright-core), which replaces it at merge. This build ships no browser.
 */
export const launchBrowser = async (): Promise<Browser> => {
  throw new PortalFailure('browser_failed', 'Chromium did not start: this build ships no browser');
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
