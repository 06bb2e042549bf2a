/**
 * The portals the automation drives, by portal id (lib/portal-accounts/portal-registry.ts), and the
 * variable that holds each one's base URL. Data only, so the API functions can tell whether an
 * account can be automated without bundling a driver (lib/rpa/drivers/registry.ts pairs these ids
 * with their drivers; a test keeps the two in step).
 */
export const AUTOMATED_PORTALS: Readonly<Record<string, { baseUrlVariable: string }>> = {
  sandbox: { baseUrlVariable: 'SANDBOX_PORTAL_URL' },
};

export const isAutomatedPortal = (portalId: string): boolean => Object.hasOwn(AUTOMATED_PORTALS, portalId);
