/**
 * The payer portals a portal account can be for. `portalId` must be one of these ids: the
 * PortalAccount schema's enum is built from this list, so an unknown id is a validation error
 * (400, the spec's Validation result) and the served schema tells clients the allowed ids.
 * Adding a portal is one row here (plus, for automation, a portal driver).
 */
export interface Portal {
  id: string;
  name: string;
}

const PORTALS = [
  { id: 'sandbox', name: 'Sandbox payer portal (shipped with this project)' },
  { id: 'availity', name: 'Availity Essentials' },
  { id: 'navinet', name: 'NaviNet Open' },
  { id: 'uhc-provider', name: 'UnitedHealthcare Provider Portal' },
  { id: 'cigna-for-hcp', name: 'Cigna for Health Care Professionals' },
  { id: 'humana-availity', name: 'Humana (via Availity)' },
  { id: 'evicore', name: 'eviCore healthcare' },
  { id: 'carelon', name: 'Carelon Medical Benefits Management' },
  { id: 'cohere', name: 'Cohere Health' },
] as const satisfies readonly Portal[];

export type PortalId = (typeof PORTALS)[number]['id'];

export const PORTAL_IDS: PortalId[] = PORTALS.map((portal) => portal.id);

const byId = new Map<string, Portal>(PORTALS.map((portal) => [portal.id, portal]));

export const portalOf = (portalId: string): Portal | undefined => byId.get(portalId);
