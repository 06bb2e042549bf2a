import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { warmBrowser } from '#lib/portal/warm-browser';

/*
 * The warm browser's bookkeeping (lib/portal/warm-browser.ts) with stand-in browsers: visits at once share one
 * launch, a disconnected browser is replaced, one still in use is closed only when its last visit ends.
 * The real Chromium, cookies and storage: test/integration/rpa-warm-browser.test.ts.
 */

type Fake = Browser & { connected: boolean; closed: number };

const fakes = () => {
  const launched: Fake[] = [];
  const launch = async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const fake = { connected: true, closed: 0, isConnected: () => fake.connected } as unknown as Fake;
    launched.push(fake);
    return fake as Browser;
  };
  const close = async (browser: Browser) => {
    const fake = browser as Fake;
    fake.closed++;
    fake.connected = false;
  };
  return { launched, launch, close };
};

describe('a warm browser', () => {
  it('launches once for visits that start together', async () => {
    const { launched, launch, close } = fakes();
    const warm = warmBrowser({ launch, close });
    const browsers = await Promise.all([warm.acquire(), warm.acquire(), warm.acquire()]);
    expect(new Set(browsers).size).toBe(1);
    expect(launched).toHaveLength(1);
    expect(warm.launches).toBe(1);
    for (const browser of browsers) await warm.release(browser);
    expect(launched[0]!.closed).toBe(0);
    await warm.close();
    expect(launched[0]!.closed).toBe(1);
  });

  it('replaces a browser that disconnected, closing it once its visit is released', async () => {
    const { launched, launch, close } = fakes();
    const warm = warmBrowser({ launch, close });
    const first = await warm.acquire();
    launched[0]!.connected = false;
    const second = await warm.acquire();
    expect(second).not.toBe(first);
    await warm.release(first);
    await warm.release(second);
    expect(launched[0]!.closed).toBe(1);
    expect(launched[1]!.closed).toBe(0);
    await warm.close();
  });

  it('does not keep a failed launch', async () => {
    let fail = true;
    const { launch, close } = fakes();
    const warm = warmBrowser({ launch: () => (fail ? Promise.reject(new Error('no Chromium')) : launch()), close });
    await expect(warm.acquire()).rejects.toThrow('no Chromium');
    fail = false;
    await expect(warm.acquire()).resolves.toBeDefined();
    expect(warm.launches).toBe(2);
    await warm.close();
  });
});
