import { afterEach, describe, expect, it, vi } from 'vitest';
import { log } from '#lib/observability/logger';
import { AUTOMATED_PORTALS, isAutomatedPortal } from '#lib/portal/automated-portals';
import { automatedPortalIds, baseUrlProblem, driverFor, portalBaseUrl } from '#lib/portal/drivers/registry';
import { sandboxDriver } from '#lib/portal/drivers/sandbox';

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a portal's base URL", () => {
  it('is https, or for the sandbox http on a loopback host', () => {
    for (const url of ['https://portal.example.com', 'https://portal.example.com:8443/app/']) {
      expect(portalBaseUrl('sandbox', { SANDBOX_PORTAL_URL: url })).toBe(url);
    }
    for (const url of [
      'http://127.0.0.1:3100',
      'http://127.9.8.7:3100',
      'http://127.10.200.255:3100',
      'http://localhost:3100',
      'http://[::1]:3100',
    ]) {
      expect(portalBaseUrl('sandbox', { SANDBOX_PORTAL_URL: url })).toBe(url);
    }
  });

  it('is refused (the portal is then not automated) when it is plain http elsewhere, carries credentials, or is no URL', () => {
    for (const url of [
      'http://portal.example.com',
      'http://10.0.0.5:3100',
      'http://127.0.0.1.nip.io:3100',
      'http://0.0.0.0:3100',
      'ftp://127.0.0.1/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'https://user:secret@portal.example.com',
      'https://user@portal.example.com',
      'https://:secret@portal.example.com',
      'portal.example.com',
      '',
    ]) {
      expect(portalBaseUrl('sandbox', { SANDBOX_PORTAL_URL: url }), url).toBeUndefined();
    }
    expect(portalBaseUrl('availity', { SANDBOX_PORTAL_URL: 'https://portal.example.com' })).toBeUndefined();
  });

  it('is logged when refused, with the portal id and never the URL; a portal without one is no news', () => {
    const warn = vi.spyOn(log, 'warn');
    expect(portalBaseUrl('sandbox', {})).toBeUndefined();
    expect(portalBaseUrl('availity', { SANDBOX_PORTAL_URL: 'https://portal.example.com' })).toBeUndefined();
    expect(warn).not.toHaveBeenCalled();
    expect(portalBaseUrl('sandbox', { SANDBOX_PORTAL_URL: 'https://user:secret@portal.example.com' })).toBeUndefined();
    expect(warn.mock.calls).toEqual([
      ['Portal base URL refused: not https, or not a URL (docs/rpa.md, "Portal drivers")', { portalId: 'sandbox' }],
    ]);
  });

  it('is looked up among the automated portals only, never in what every object inherits', () => {
    // A name of Object.prototype has no base URL variable: not even one named "undefined".
    expect(portalBaseUrl('toString', { undefined: 'https://portal.example.com' })).toBeUndefined();
    expect(portalBaseUrl('constructor', { undefined: 'https://portal.example.com' })).toBeUndefined();
  });

  it('of a portal that does not allow loopback http must be https, whatever the host', () => {
    expect(baseUrlProblem('http://127.0.0.1:3100', { loopbackHttp: false })).toBe('must be https');
    expect(baseUrlProblem('https://portal.example.com', { loopbackHttp: false })).toBeUndefined();
    expect(baseUrlProblem('http://portal.example.com', { loopbackHttp: true })).toBe(
      'must be https (or http on a loopback host)',
    );
    expect(baseUrlProblem('https://a:b@portal.example.com', { loopbackHttp: false })).toBe(
      'must not carry a user name or password',
    );
  });
});

describe('the automated portals', () => {
  it('are the portals with a driver: the API (automated-portals.ts) and the worker (registry.ts) agree', () => {
    expect(automatedPortalIds().sort()).toEqual(Object.keys(AUTOMATED_PORTALS).sort());
    for (const portalId of automatedPortalIds()) expect(isAutomatedPortal(portalId)).toBe(true);
    expect(isAutomatedPortal('availity')).toBe(false);
    expect(isAutomatedPortal('constructor')).toBe(false);
  });

  it('each have their driver; no other id has one', () => {
    expect(driverFor('sandbox')).toBe(sandboxDriver);
    expect(driverFor('availity')).toBeUndefined();
    expect(driverFor('constructor')).toBeUndefined();
  });
});
