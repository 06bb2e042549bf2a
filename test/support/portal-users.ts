import type { SandboxUser } from '#local/sandbox-portal/seed';

/**
 * Sandbox portal users of the test stack's own, added to the portal's seed by global-setup.ts, for the
 * end-to-end tests' refused logins. A lockout (or a count of failed logins) belongs to a portal username and
 * lasts as long as the portal, which every test file shares: these users keep that away from the demo users
 * (local/sandbox-portal/seed.ts) that the other runs log in with.
 */
export const TEST_PORTAL_USERS = {
  /** Only ever tried with a wrong password, once per test run: never locked. */
  wrongPassword: { username: 'e2e-wrong-password', password: 'e2e-never-typed-Vq4m7Tz2', totpSecret: null },
  /** Locked by a test with three wrong passwords, then tried by the automation with the right one. */
  locked: { username: 'e2e-locked', password: 'e2e-locked-password-Hw8c3Lp5', totpSecret: null },
} as const satisfies Record<string, SandboxUser>;
