import { Secret, TOTP } from 'otpauth';
import { type Browser, errors, type Page } from 'playwright-core';
import type { PriorAuthorizationForm } from '#lib/portal/prior-authorization-form';
import {
  type CallOptions,
  type FilledForm,
  type LogInOptions,
  type PortalAuthorization,
  type PortalCredentials,
  type PortalDriver,
  PortalFailure,
  type PortalSession,
  type StatusQuery,
} from './driver.ts';
import { openPortalContext, type PortalContext, unexpectedOrigin } from './portal-context.ts';
import { maskedScreenshot } from './screenshot.ts';

/**
 * The driver of the sandbox payer portal (local/sandbox-portal/, docs/sandbox-portal.md). It knows
 * the portal only as a browser sees it: pages named by `data-page` on <body>, fields by their
 * names, links and buttons by their ids. It never submits the prior-authorization form. It works in
 * a context pinned to the portal's origin (portal-context.ts): one origin, the base URL's.
 */

/**
 * What a browser error means for the run. Raw messages stay out: Playwright's call logs quote
 * the element they waited for, attributes and values (PHI) included. Once the portal has led the
 * browser elsewhere, whatever failed after it (a closed page, a refused tunnel) is that.
 */
const failureOf = (error: unknown, step: string, portal?: PortalContext): PortalFailure => {
  if (portal?.strayed) return unexpectedOrigin();
  if (error instanceof PortalFailure) return error;
  if (error instanceof errors.TimeoutError) {
    return new PortalFailure('portal_timeout', `The portal did not answer in time (${step}).`, true);
  }
  const message = error instanceof Error ? error.message : '';
  const network = /net::ERR_[A-Z_]+/.exec(message)?.[0];
  if (network) return new PortalFailure('portal_timeout', `The portal could not be reached (${step}: ${network}).`);
  if (/has been closed|Browser closed|crashed/i.test(message)) {
    return new PortalFailure('browser_failed', `The browser closed or crashed (${step}).`);
  }
  const name = error instanceof Error ? error.name : typeof error;
  return new PortalFailure('portal_error', `The portal did something unexpected (${step}: ${name}).`);
};

/** Runs `work` for at most `timeoutMs`; whatever it throws becomes a PortalFailure. */
const within = async <T>(
  timeoutMs: number,
  step: string,
  work: () => Promise<T>,
  portal?: PortalContext,
): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const running = work();
  // Once the time is up nobody awaits `running`; its late rejection must not become an unhandled one.
  running.catch(() => undefined);
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new PortalFailure('portal_timeout', `The portal did not answer in time (${step}).`, true)),
      timeoutMs,
    );
  });
  try {
    // A portal that leads elsewhere ends the call at once, whatever it was waiting for.
    return await Promise.race(portal ? [running, expired, portal.whenStrayed] : [running, expired]);
  } catch (error) {
    throw failureOf(error, step, portal);
  } finally {
    clearTimeout(timer);
  }
};

const pageNameOf = async (page: Page) => (await page.locator('body').getAttribute('data-page')) ?? '';

/**
 * Clicks something that loads a new page and waits for that page. The current document is marked
 * first, so the wait ends on the next document's <body>, not on the one the click left.
 */
const follow = async (portal: PortalContext, page: Page, selector: string): Promise<string> => {
  await page.locator('body').evaluate((body) => {
    (body as unknown as { dataset: Record<string, string> }).dataset.driverLeft = 'yes';
  });
  await page.locator(selector).click();
  await page.locator('body[data-page]:not([data-driver-left])').waitFor({ state: 'attached' });
  await page.waitForLoadState('domcontentloaded');
  portal.checkPage(page);
  return pageNameOf(page);
};

const open = async (portal: PortalContext, page: Page, url: string): Promise<string> => {
  const response = await page.goto(url, { waitUntil: 'domcontentloaded' });
  portal.checkPage(page);
  if (response && response.status() >= 500) {
    throw new PortalFailure('portal_error', `The portal answered ${response.status()} (${new URL(url).pathname}).`);
  }
  return pageNameOf(page);
};

const expectPage = (landed: string, expected: string, step: string) => {
  if (landed === expected) return;
  if (landed === 'login') throw new PortalFailure('portal_error', `The portal ended the session (${step}).`);
  throw new PortalFailure('portal_error', `The portal showed an unexpected page (${step}: ${landed || 'unnamed'}).`);
};

const totpCode = (secret: string) => {
  try {
    return new TOTP({
      secret: Secret.fromBase32(secret.replace(/\s+/g, '')),
      algorithm: 'SHA1',
      digits: 6,
      period: 30,
    }).generate();
  } catch {
    throw new PortalFailure('wrong_password', "The account's TOTP secret is not valid base32.");
  }
};

/**
 * The sign-in pages, page by page; ends on the home page or throws the named failure. Each
 * credential is typed only after the page and its form are found to be the portal's.
 */
const signIn = async (portal: PortalContext, page: Page, credentials: PortalCredentials, baseUrl: string) => {
  expectPage(await open(portal, page, new URL('/login', baseUrl).href), 'login', 'opening the sign-in page');
  await portal.checkCredentialTarget(page, '#login-form');
  await page.locator('#username').fill(credentials.username);
  await page.locator('#password').fill(credentials.password);
  let landed = await follow(portal, page, '#sign-in');
  if (landed === 'totp') {
    if (!credentials.totpSecret) {
      throw new PortalFailure(
        'mfa_required',
        'The portal asks for a verification code and the account has no TOTP secret.',
      );
    }
    const code = totpCode(credentials.totpSecret);
    await portal.checkCredentialTarget(page, '#totp-form');
    await page.locator('#totp-code').fill(code);
    landed = await follow(portal, page, '#verify');
    if (landed === 'totp') throw new PortalFailure('wrong_password', 'The portal refused the verification code.');
  }
  if (landed === 'locked') throw new PortalFailure('account_locked', 'The portal says the account is locked.');
  if (landed === 'login') {
    const error = await page
      .locator('[data-error]')
      .first()
      .getAttribute('data-error', { timeout: 1_000 })
      .catch(() => null);
    if (error === 'wrong_password') {
      throw new PortalFailure('wrong_password', 'The portal refused the username or password.');
    }
  }
  expectPage(landed, 'home', 'signing in');
};

/** The form's values by the portal's field names; blank values are left as the page has them. */
const fieldsOf = (form: PriorAuthorizationForm): [string, string][] => {
  const fields: Record<string, string> = {
    reference: form.reference,
    'patient.memberId': form.patient.memberId,
    'patient.firstName': form.patient.firstName,
    'patient.lastName': form.patient.lastName,
    'patient.birthDate': form.patient.birthDate,
    'patient.payerId': form.patient.payerId,
    serviceTypeCode: form.serviceTypeCode,
    placeOfServiceCode: form.placeOfServiceCode,
    admissionTypeCode: form.admissionTypeCode,
    fromDate: form.fromDate,
    toDate: form.toDate,
  };
  const rows = (prefix: string, entries: object[]) =>
    entries.forEach((entry, index) => {
      for (const [key, value] of Object.entries(entry)) fields[`${prefix}.${index}.${key}`] = value;
    });
  for (const [key, value] of Object.entries(form.requestingProvider)) fields[`requestingProvider.${key}`] = value;
  rows('renderingProviders', form.renderingProviders);
  rows('diagnoses', form.diagnoses);
  rows('procedures', form.procedures);
  return Object.entries(fields).filter(([, value]) => value !== '');
};

/** Adds rows (the portal's `Add …` buttons) until the group has `needed` of them. */
const ensureRows = async (page: Page, group: string, needed: number) => {
  const rows = page.locator(`#${group}-rows > .row`);
  for (let count = await rows.count(); count < needed; ) {
    await page.locator(`#add-${group}`).click();
    const added = await rows.count();
    if (added === count) {
      throw new PortalFailure(
        'portal_error',
        `The portal's form takes at most ${count} ${group}; the request has ${needed}.`,
      );
    }
    count = added;
  }
};

/** The form's fields by name: for a select, the codes it offers; for an input, null. One round trip for all. */
const describeFields = (page: Page): Promise<Record<string, string[] | null>> =>
  page.locator('#prior-authorization-form').evaluate((form) => {
    const fields: Record<string, string[] | null> = {};
    type Field = { name?: string; tagName: string; options?: ArrayLike<{ value: string }> };
    for (const element of Array.from((form as unknown as { elements: ArrayLike<Field> }).elements)) {
      if (!element.name) continue;
      fields[element.name] =
        element.tagName === 'SELECT' ? Array.from(element.options ?? []).map((option) => option.value) : null;
    }
    return fields;
  });

const setField = async (page: Page, fields: Record<string, string[] | null>, name: string, value: string) => {
  if (!(name in fields)) throw new PortalFailure('portal_error', `The portal's form has no field ${name}.`);
  const field = page.locator(`#prior-authorization-form [name="${name}"]`);
  const options = fields[name];
  if (!options) return field.fill(value);
  // selectOption waits for a missing option until the timeout; a code the portal lacks is no timeout.
  if (!options.includes(value)) {
    throw new PortalFailure('portal_error', `The portal does not offer the request's ${name}.`);
  }
  await field.selectOption(value);
};

/** What the page's form holds now, read from the fields themselves (hidden and blank ones left out). */
const readForm = (page: Page): Promise<Record<string, string>> =>
  page.locator('#prior-authorization-form').evaluate((form) => {
    const values: Record<string, string> = {};
    const elements = (form as unknown as { elements: ArrayLike<{ name?: string; type?: string; value?: string }> })
      .elements;
    for (const element of Array.from(elements)) {
      if (!element.name || !element.value) continue;
      if (['hidden', 'password', 'submit', 'button'].includes(element.type ?? '')) continue;
      values[element.name] = element.value;
    }
    return values;
  });

const STATUSES = new Set(['approved', 'partially_approved', 'denied', 'pended', 'not_found']);

/** The text of an element the page may not have: absent is undefined, never a wait. */
const optionalText = async (page: Page, selector: string) => {
  const element = page.locator(selector);
  if ((await element.count()) === 0) return undefined;
  return (await element.first().textContent())?.trim() || undefined;
};

/** A page of the session's context, each of its waits bounded by the session's timeout. */
const openPage = async (portal: PortalContext, timeoutMs: number): Promise<Page> => {
  const page = await portal.context.newPage();
  page.setDefaultTimeout(timeoutMs);
  page.setDefaultNavigationTimeout(timeoutMs);
  return page;
};

/** Long enough for Chromium to close a page; a page that takes longer is left to the context's close. */
const PAGE_CLOSE_MS = 5_000;

/**
 * The session's page. A call that ran out of time leaves its page mid-navigation, waiting on a portal
 * that may never answer: that page is closed (its navigation and requests stop with it) and the next
 * call opens a fresh one in the same context, still signed in (the cookies are the context's). So a
 * hung page costs its own call, never the session's next ones.
 */
const sessionPages = (portal: PortalContext, first: Page, timeoutMs: number) => {
  let current: Page | undefined = first;
  return {
    page: async (limitMs: number): Promise<Page> => {
      current ??= await within(limitMs, 'opening a page', () => openPage(portal, timeoutMs), portal);
      return current;
    },
    abandon: async () => {
      const hung = current;
      current = undefined;
      if (!hung) return;
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise((resolve) => {
        timer = setTimeout(resolve, PAGE_CLOSE_MS);
      });
      await Promise.race([hung.close({ runBeforeUnload: false }).catch(() => undefined), waited]);
      clearTimeout(timer);
    },
  };
};

const session = (portal: PortalContext, first: Page, baseUrl: string, timeoutMs: number): PortalSession => {
  const pages = sessionPages(portal, first, timeoutMs);
  /** One call on the session's page, within its own limit or the session's; a call that hangs abandons the page. */
  const onPage = async <T>(step: string, options: CallOptions | undefined, work: (page: Page) => Promise<T>) => {
    const deadline = Date.now() + Math.min(timeoutMs, options?.timeoutMs ?? timeoutMs);
    const left = () => Math.max(1, deadline - Date.now());
    const page = await pages.page(left());
    try {
      return await within(left(), step, () => work(page), portal);
    } catch (error) {
      if (error instanceof PortalFailure && error.hung) await pages.abandon();
      throw error;
    }
  };
  const fromHome = async (page: Page, link: string, expected: string, step: string) => {
    expectPage(await open(portal, page, new URL('/home', baseUrl).href), 'home', step);
    expectPage(await follow(portal, page, link), expected, step);
  };

  return {
    fillPriorAuthorization: (form, options) =>
      onPage('filling the prior-authorization form', options, async (page): Promise<FilledForm> => {
        await fromHome(
          page,
          '#prior-authorization-link',
          'prior-authorization',
          'opening the prior-authorization form',
        );
        await ensureRows(page, 'renderingProviders', form.renderingProviders.length);
        await ensureRows(page, 'diagnoses', form.diagnoses.length);
        await ensureRows(page, 'procedures', form.procedures.length);
        const fields = await describeFields(page);
        const typed = fieldsOf(form);
        for (const [name, value] of typed) await setField(page, fields, name, value);
        return { typed: Object.fromEntries(typed), held: await readForm(page) };
      }),

    readAuthorizationStatus: (query: StatusQuery, options) =>
      onPage('reading the authorization status', options, async (page): Promise<PortalAuthorization> => {
        await fromHome(page, '#status-lookup-link', 'status-lookup', 'opening the status lookup');
        await page.locator('#status-member-id').fill(query.memberId);
        await page.locator('#status-reference').fill(query.requestExternalId);
        if (query.fromDate) await page.locator('#status-from-date').fill(query.fromDate);
        expectPage(await follow(portal, page, '#look-up'), 'status-lookup', 'looking the status up');
        const result = page.locator('#status-result');
        const status = (await result.count()) === 1 ? await result.getAttribute('data-status') : null;
        if (!status || !STATUSES.has(status)) {
          throw new PortalFailure('portal_error', 'The portal showed no status the driver knows.');
        }
        if (status === 'not_found') return { status };
        const number = await optionalText(page, '#authorization-number');
        const decisionDate = await optionalText(page, '#decision-date');
        return {
          status: status as PortalAuthorization['status'],
          ...(number ? { number } : {}),
          ...(decisionDate ? { decisionDate } : {}),
        };
      }),

    // The label names the capture for the run's record; the image is the same whatever it says.
    screenshot: (_label: string, options) => onPage('taking a screenshot', options, (page) => maskedScreenshot(page)),

    close: () => portal.close(),
  };
};

/** The sandbox portal lives on one origin: its base URL's. */
const origins = (baseUrl: string) => [new URL(baseUrl).origin];

export const sandboxDriver: PortalDriver = {
  portalId: 'sandbox',
  origins,
  logIn: async (browser: Browser, credentials: PortalCredentials, { baseUrl, timeoutMs }: LogInOptions) => {
    const portal = await within(timeoutMs, 'opening a browser context', () =>
      openPortalContext(browser, {
        origins: origins(baseUrl),
        display: { viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' },
      }),
    );
    try {
      const page = await within(
        timeoutMs,
        'signing in',
        async () => {
          const page = await openPage(portal, timeoutMs);
          await signIn(portal, page, credentials, baseUrl);
          return page;
        },
        portal,
      );
      return session(portal, page, baseUrl, timeoutMs);
    } catch (error) {
      await portal.close();
      throw error;
    }
  },
};
