import type { Browser } from 'playwright-core';
import type { PriorAuthorizationForm } from '#lib/portal/prior-authorization-form';
import type { PortalCredentials } from '#lib/portal-accounts/credentials';

/**
 * What every portal driver offers the worker (docs/rpa.md, "Portal drivers"). A driver logs in
 * once and hands back a session (one browser context); the worker fills a form or reads a status
 * through it, takes screenshots and closes it. Drivers never submit a form.
 */
export type { PortalCredentials, PriorAuthorizationForm };

/**
 * The failures a driver (or the browser launcher, or the run credentials source) names; each is a
 * run outcome of docs/rpa.md.
 */
export type PortalFailureOutcome =
  | 'wrong_password'
  | 'account_locked'
  | 'mfa_required'
  | 'portal_timeout'
  | 'portal_error'
  | 'browser_failed'
  | 'credentials_refused'
  | 'unexpected_origin';

/**
 * A named failure. The message is for the run's steps and logs: it names the step and the kind
 * of failure, never a credential, a typed value or a raw browser message (those can quote the
 * page, and the page holds PHI).
 */
export class PortalFailure extends Error {
  constructor(
    readonly outcome: PortalFailureOutcome,
    message: string,
    /**
     * A `portal_timeout` whose call ran out of time: the portal took the request and never answered
     * (the page hung), as against a portal that could not be reached at all. The driver has abandoned
     * the page it hung on: the session's next call starts on a fresh one.
     */
    readonly hung = false,
  ) {
    super(message);
    this.name = 'PortalFailure';
  }

  /** The portal or the browser may answer on another attempt; a refused login will not. */
  get transient(): boolean {
    return this.outcome === 'portal_timeout' || this.outcome === 'browser_failed';
  }
}

export const isPortalFailure = (error: unknown): error is PortalFailure => error instanceof PortalFailure;

/**
 * What filling did, field by field (by the portal's field names, in the form's order): what the driver
 * typed or selected (the request's values), and what the form's fields held afterwards (the page's
 * own text, blank fields left out). The worker stores the first and, per field, whether the second
 * matched it; never the page's text (docs/rpa.md, "Data").
 */
export interface FilledForm {
  typed: Record<string, string>;
  held: Record<string, string>;
}

export interface StatusQuery {
  memberId: string;
  /** The request's externalId: the reference the portal knows the authorization by. */
  requestExternalId: string;
  fromDate?: string;
}

export interface PortalAuthorization {
  status: 'approved' | 'partially_approved' | 'denied' | 'pended' | 'not_found';
  number?: string;
  decisionDate?: string;
}

/** One call's own bound, when it must end sooner than the session's timeout (a lookup's deadline). */
export interface CallOptions {
  timeoutMs?: number;
}

/**
 * One logged-in browser context. Every call ends within the driver's timeout, or its own when shorter;
 * a call that runs out of time throws a `hung` PortalFailure and leaves the session usable.
 */
export interface PortalSession {
  /** Fills the portal's prior-authorization form and reads it back; stops before submitting. */
  fillPriorAuthorization(form: PriorAuthorizationForm, options?: CallOptions): Promise<FilledForm>;
  readAuthorizationStatus(query: StatusQuery, options?: CallOptions): Promise<PortalAuthorization>;
  /** A PNG of the current page; password fields are blanked and masked before the capture. */
  screenshot(label: string, options?: CallOptions): Promise<Buffer>;
  /** Ends the session (its pages and cookies); never throws, never hangs. */
  close(): Promise<void>;
}

export interface LogInOptions {
  baseUrl: string;
  /** The limit for the login and, separately, for each call on the session. */
  timeoutMs: number;
}

export interface PortalDriver {
  portalId: string;
  /**
   * The origins the portal's pages, frames, scripts and forms live on, for a base URL. The browser
   * context reaches these and nothing else (portal-context.ts); a page or redirect that leads
   * anywhere else ends the session with `unexpected_origin`.
   */
  origins(baseUrl: string): string[];
  /**
   * Logs in, or throws PortalFailure (`wrong_password`, `account_locked`, `mfa_required`,
   * `portal_timeout`, `portal_error`, `unexpected_origin`).
   */
  logIn(browser: Browser, credentials: PortalCredentials, options: LogInOptions): Promise<PortalSession>;
}
