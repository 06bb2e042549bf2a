import { type Env, environment } from '#lib/config/environment';
import { log } from '#lib/observability/logger';
import { AUTOMATED_PORTALS, type AutomatedPortal, isAutomatedPortal } from '#lib/portal/automated-portals';
import type { PortalDriver } from './driver.ts';
import { sandboxDriver } from './sandbox.ts';

/**
 * The portal drivers by portal id; where each portal lives is in lib/portal/automated-portals.ts. A
 * portal without a driver here cannot be automated yet.
 */
const DRIVERS = new Map<string, PortalDriver>([[sandboxDriver.portalId, sandboxDriver]]);

export const driverFor = (portalId: string): PortalDriver | undefined => DRIVERS.get(portalId);

export const automatedPortalIds = (): string[] => [...DRIVERS.keys()];

/** 127.0.0.0/8, ::1 and localhost: nothing outside this machine. */
const isLoopback = (hostname: string) =>
  hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);

/**
 * Why a configured base URL is refused, or undefined when it is fine: https (a password never
 * crosses a network in clear), or http on a loopback host for a portal that allows it (the sandbox
 * on this machine; on AWS nothing listens there), with no user name or password in it.
 */
export const baseUrlProblem = (
  value: string,
  registered: Pick<AutomatedPortal, 'loopbackHttp'>,
): string | undefined => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && registered.loopbackHttp && isLoopback(url.hostname)) return undefined;
  return registered.loopbackHttp ? 'must be https (or http on a loopback host)' : 'must be https';
};

/**
 * The portal's base URL from configuration, or undefined when the portal has no driver, no URL is
 * set, or the URL is refused (baseUrlProblem; logged with the portal's id, never the URL).
 */
export const portalBaseUrl = (portalId: string, env: Env = environment()): string | undefined => {
  const registered = DRIVERS.has(portalId) && isAutomatedPortal(portalId) ? AUTOMATED_PORTALS[portalId] : undefined;
  const value = registered && env[registered.baseUrlVariable];
  if (!registered || !value) return undefined;
  const problem = baseUrlProblem(value, registered);
  if (!problem) return value;
  log.warn('Portal base URL refused: not https, or not a URL (docs/rpa.md, "Portal drivers")', { portalId });
  return undefined;
};
