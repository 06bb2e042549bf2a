import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BadRequest } from './forms.ts';
import { sandboxOperator } from './operator.ts';
import { messagePage } from './pages.ts';
import { route } from './portal-routes.ts';
import { type HostileMode, type Portal, redirect, type Submission, securityHeaders, sendPage } from './portal-state.ts';
import { SANDBOX_SERVICE_FROM_DATE, type SandboxAuthorization, type SandboxSeed, sandboxSeed } from './seed.ts';

/**
 * The sandbox payer portal: a small server-rendered web app on loopback that behaves like a payer
 * portal as far as a driver can tell (sign-in, two-step verification, lockout, a prior-authorization
 * form, a status lookup). State lives in memory and starts from the seed on every start.
 */
export interface SandboxPortalOptions {
  port?: number;
  host?: string;
  seed?: SandboxSeed;
  /** Requests for these paths (any method) never get an answer: for tests of timeouts. */
  hangPaths?: string[];
  /** The portal leads the browser to another origin: for tests of origin pinning (docs/sandbox-portal.md). */
  hostile?: { mode: HostileMode; origin: string };
  /** The operator's token (operator.ts); random by default, printed by main.ts and `npm start`. */
  operatorToken?: string;
}

export interface SandboxPortal {
  url: string;
  /** Prior-authorization forms submitted since the start (the automation never submits one). */
  readonly submissions: readonly Submission[];
  /** What provider services would do on the phone: clears a user's failed attempts and lock. */
  unlock(username: string): void;
  /** Sign-in attempts (POST /login) since the start, by username: what a lockout policy counts. */
  loginAttempts(username?: string): number;
  /** The operator's token (docs/sandbox-portal.md, "The operator"): `Authorization: Bearer`, or … */
  operatorToken: string;
  /** … the link a browser opens once: `<url>/operator?token=<operatorToken>`. */
  operatorUrl: string;
  close(): Promise<void>;
}

/** The portal's state as the seed starts it, with the operator over the same authorizations. */
function portalOf(options: SandboxPortalOptions, operatorToken: string): Portal {
  const seed = options.seed ?? sandboxSeed;
  const hostile = options.hostile;
  const authorizations: SandboxAuthorization[] = seed.authorizations.map((authorization) => ({ ...authorization }));
  const members = new Map(seed.members.map((member) => [member.memberId, member]));
  const portal: Portal = {
    seed,
    hangPaths: new Set(options.hangPaths ?? []),
    hostile,
    securityHeaders: securityHeaders(hostile && new URL(hostile.origin).origin),
    users: new Map(seed.users.map((user) => [user.username, { user, failures: 0, locked: false }])),
    members,
    authorizations,
    submissions: [],
    sessions: new Map(),
    attempts: new Map(),
    // Its answers go through the portal's own (headers included), called once the portal exists.
    operator: sandboxOperator({
      token: operatorToken,
      csrf: randomBytes(24).toString('base64url'),
      authorizations,
      members,
      fromDate: SANDBOX_SERVICE_FROM_DATE,
      send: (res, status, page, headers) => sendPage(portal, res, status, page, headers),
      redirect: (res, location, headers) => redirect(portal, res, location, headers),
    }),
  };
  return portal;
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Hung requests and browsers' keep-alive connections would hold close() open forever.
    server.closeAllConnections();
  });
}

export const startSandboxPortal = async (options: SandboxPortalOptions = {}): Promise<SandboxPortal> => {
  const operatorToken = options.operatorToken ?? randomBytes(32).toString('base64url');
  const portal = portalOf(options, operatorToken);
  const server = createServer((req, res) => {
    route(portal, req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      if (error instanceof BadRequest) {
        return sendPage(portal, res, error.status, messagePage('error', 'Error', error.message));
      }
      sendPage(portal, res, 500, messagePage('error', 'Error', 'Something went wrong.'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const { users, attempts, submissions } = portal;
  return {
    url: `http://${host}:${address.port}`,
    get submissions() {
      return submissions;
    },
    unlock(username: string) {
      const state = users.get(username);
      if (state) Object.assign(state, { failures: 0, locked: false });
    },
    operatorToken,
    operatorUrl: `http://${host}:${address.port}/operator?token=${operatorToken}`,
    loginAttempts(username?: string) {
      if (username !== undefined) return attempts.get(username) ?? 0;
      return [...attempts.values()].reduce((sum, count) => sum + count, 0);
    },
    close: () => closeServer(server),
  };
};
