/**
 * Port: one automation session at a time per portal account (docs/rpa.md, "No lockouts"). Two
 * sessions on one account would make two logins at once, which portals count towards a lockout and
 * some refuse outright; a run that finds the lease taken waits behind it (the state machine retries
 * `PortalAccountBusy`).
 */
export interface AccountLeases {
  /** Takes the lease for `seconds`, or renews it for its holder; false while another holds it. */
  acquire(clientId: string, portalAccountId: string, holder: string, seconds: number): Promise<boolean>;
  /** Gives it back (only its holder can); never throws for a lease that is gone or taken over. */
  release(clientId: string, portalAccountId: string, holder: string): Promise<void>;
}

/** The lease outlives the longest session it covers: a browser task's time (120 s) and the worker's close. */
export const LEASE_SECONDS = 180;
