import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '#lib/openapi/operations';
import { closeBrowser, launchBrowser } from '#lib/portal/browser';
import { routes } from '#lib/routes/route-table';
import { SCALAR_STANDALONE } from '#scripts/api-reference-script';
import { baseUrl, call } from '#test/support/api';

/** Where browser tests leave what they saw. */
const outputDir = join(import.meta.dirname, '..', 'output', 'api-reference');

describe('the API description on the local stack', () => {
  it('serves the OpenAPI document without a key, valid, with this API as its server', async () => {
    const response = await call('GET', '/api/external/openapi.json', { apiKey: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const validator = new Validator();
    expect(await validator.validate(response.body)).toEqual({ valid: true });
    expect(response.body.openapi).toBe('3.1.0');
    expect(response.body.servers).toEqual([{ url: baseUrl }]);
    for (const route of routes) expect(response.body.paths[route.path]?.[route.method.toLowerCase()]).toBeDefined();
  });

  it('serves the page and its renderer without a key, the page under a strict CSP', async () => {
    const page = await call('GET', '/api/external/docs', { apiKey: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-eval|https?:/);
    const script = await call('GET', '/api/external/docs/api-reference.js', { apiKey: null });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    // The pinned file out of Scalar's tarball (scripts/api-reference-script.ts), as it is.
    expect(createHash('sha256').update(script.text).digest('hex')).toBe(SCALAR_STANDALONE.sha256);
  });

  it('still asks every other route for a key', async () => {
    expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey: null })).status).toBe(401);
  });

  describe('in headless Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchBrowser();
    }, 120_000);
    afterAll(async () => {
      if (browser) await closeBrowser(browser);
    });

    it('lists every operation, fetching nothing from another origin and breaking no CSP rule', async () => {
      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      const page = await context.newPage();
      const origin = new URL(baseUrl).origin;
      const requested: string[] = [];
      const violations: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${baseUrl}/api/external/docs`);
      // The sidebar links every operation as #tag/<tag>/<METHOD><path>.
      const links = page.locator('a[href^="#tag/"]');
      await links.first().waitFor({ timeout: 60_000 });
      await expect.poll(() => links.count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(routes.length);
      const listed = await links.evaluateAll((anchors) =>
        anchors.map((anchor) => ({ href: decodeURI(anchor.getAttribute('href')!), text: anchor.textContent ?? '' })),
      );
      for (const route of routes) {
        const entries = listed.filter(({ href }) => href.endsWith(`/${route.method}${route.path}`));
        expect(entries).toHaveLength(1);
        expect(entries[0]!.text).toContain(operations[route.handler]!.summary);
      }
      mkdirSync(outputDir, { recursive: true });
      await page.screenshot({ path: join(outputDir, 'api-reference.png') });
      await context.close();
      expect(
        requested.filter(
          (url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:'),
        ),
      ).toEqual([]);
      expect(requested).toEqual(
        expect.arrayContaining([`${origin}/api/external/docs/api-reference.js`, `${origin}/api/external/openapi.json`]),
      );
      expect(violations).toEqual([]);
    }, 120_000);
  });
});
