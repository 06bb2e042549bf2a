/**
 * The portals the automation drives, by portal id (lib/portal-accounts/portal-registry.ts): the
 * variable that holds each one's base URL, and whether plain http on a loopback host is accepted
 * (the local sandbox only; every other portal is https). Data only, so the API functions can tell
 * whether an account can be automated without bundling a driver; lib/portal/drivers/registry.ts pairs
 * these ids with their drivers (a unit test keeps the two in step).
 */
export interface AutomatedPortal {
  /** The environment variable holding the portal's base URL (locally the stack sets it). */
  baseUrlVariable: string;
  loopbackHttp?: boolean;
}

export const AUTOMATED_PORTALS: Readonly<Record<string, AutomatedPortal>> = {
  sandbox: { baseUrlVariable: 'SANDBOX_PORTAL_URL', loopbackHttp: true },
};

export const isAutomatedPortal = (portalId: string): boolean => Object.hasOwn(AUTOMATED_PORTALS, portalId);
