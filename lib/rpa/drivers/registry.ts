import { log } from '#lib/observability/logger';
import type { PortalDriver } from './driver.ts';
import { sandboxDriver } from './sandbox.ts';

/**
 * The portal drivers by portal id (the ids of lib/portal-accounts/portal-registry.ts), and where
 * each portal lives. A portal without a driver here cannot be automated yet.
 */
interface Registered {
  driver: PortalDriver;
  /** The environment variable holding the portal's base URL (locally the stack sets it). */
  baseUrlVariable: string;
  /** Plain http on a loopback host is accepted: the local sandbox only. Every other portal is https. */
  loopbackHttp?: boolean;
}

const REGISTERED = new Map<string, Registered>([
  [sandboxDriver.portalId, { driver: sandboxDriver, baseUrlVariable: 'SANDBOX_PORTAL_URL', loopbackHttp: true }],
]);

export const driverFor = (portalId: string): PortalDriver | undefined => REGISTERED.get(portalId)?.driver;

export const automatedPortalIds = (): string[] => [...REGISTERED.keys()];

/** 127.0.0.0/8, ::1 and localhost: nothing outside this machine. */
const isLoopback = (hostname: string) =>
  hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);

/**
 * Why a configured base URL is refused, or undefined when it is fine: https (a password never
 * crosses a network in clear), or http on a loopback host for a portal that allows it (the sandbox
 * on this machine; on AWS nothing listens there), with no user name or password in it.
 */
export const baseUrlProblem = (value: string, registered: Pick<Registered, 'loopbackHttp'>): string | undefined => {
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
export const portalBaseUrl = (portalId: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const registered = REGISTERED.get(portalId);
  const value = registered && env[registered.baseUrlVariable];
  if (!registered || !value) return undefined;
  const problem = baseUrlProblem(value, registered);
  if (!problem) return value;
  log.warn('Portal base URL refused: not https, or not a URL (docs/rpa.md, "Portal drivers")', { portalId });
  return undefined;
};
