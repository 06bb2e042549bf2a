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
}

const REGISTERED = new Map<string, Registered>([
  [sandboxDriver.portalId, { driver: sandboxDriver, baseUrlVariable: 'SANDBOX_PORTAL_URL' }],
]);

export const driverFor = (portalId: string): PortalDriver | undefined => REGISTERED.get(portalId)?.driver;

export const automatedPortalIds = (): string[] => [...REGISTERED.keys()];

/** The portal's base URL from configuration, or undefined when the portal has no driver or no URL is set. */
export const portalBaseUrl = (portalId: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const registered = REGISTERED.get(portalId);
  return (registered && env[registered.baseUrlVariable]) || undefined;
};
