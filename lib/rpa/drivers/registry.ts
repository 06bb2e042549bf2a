import type { PortalDriver } from './driver.ts';

/**
 * PLACEHOLDER for the portal branch's registry, which replaces it at merge: the portal drivers by
 * portal id, and where each portal lives. This build has no driver, so no portal can be automated.
 */
const REGISTERED = new Map<string, { driver: PortalDriver; baseUrlVariable: string }>();

export const driverFor = (portalId: string): PortalDriver | undefined => REGISTERED.get(portalId)?.driver;

/** The portal's base URL from configuration, or undefined when the portal has no driver or no URL is set. */
export const portalBaseUrl = (portalId: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const registered = REGISTERED.get(portalId);
  return (registered && env[registered.baseUrlVariable]) || undefined;
};
