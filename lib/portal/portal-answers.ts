import type { EnteredValues, PortalAuthorizationRecord } from '#lib/entities/rpa';
import type { FilledForm } from './drivers/driver.ts';

/*
 * What the worker keeps of a portal's answers (docs/rpa.md, "Data"): only values of ours, or values
 * of the portal's that passed a pattern and a length. A portal's page is text anyone who can edit it
 * wrote (a compromised portal, an injected script): it is compared or checked, never stored as it is.
 */

/** Bounds of what a run records of a filled form (the values are the request's, already bounded there). */
const MAX_ENTERED_FIELDS = 200;
const MAX_FIELD_NAME = 100;
const MAX_FIELD_VALUE = 1000;

/**
 * The run's `enteredValues`: per field we typed, its value and whether the page's field held the
 * same afterwards. The page's own values are only compared: a field the page holds that we did not
 * type is left out, and what it holds instead of ours is not recorded.
 */
export const enteredValuesOf = (filled: FilledForm): EnteredValues =>
  Object.fromEntries(
    Object.entries(filled.typed)
      .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
      .slice(0, MAX_ENTERED_FIELDS)
      .map(([field, value]) => [
        field.slice(0, MAX_FIELD_NAME),
        {
          value: value.slice(0, MAX_FIELD_VALUE),
          readBack: Object.hasOwn(filled.held, field) && filled.held[field] === value,
        },
      ]),
  );

const STATUSES: ReadonlySet<string> = new Set(['approved', 'partially_approved', 'denied', 'pended', 'not_found']);
/** What payers' authorization numbers look like: letters, digits and hyphens, 1 to 50 of them. */
const AUTHORIZATION_NUMBER = /^[A-Za-z0-9-]{1,50}$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** YYYY-MM-DD naming a day of the calendar (no 2026-02-30). */
const isIsoDate = (text: string) => {
  const parts = ISO_DATE.exec(text);
  if (!parts) return false;
  const [year, month, day] = parts.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
};

/** An answer the run may store, or the reason it is refused: a fixed text of ours naming the field. */
export type CheckedAuthorization = { record: PortalAuthorizationRecord } | { refused: string };

/**
 * The portal's answer to a status lookup, checked before anything of it is stored: the status one
 * of the four, the number 1–50 of `[A-Za-z0-9-]`, the decision date an existing YYYY-MM-DD. An
 * absent (undefined) number or date is null; for `not_found` neither is kept.
 */
export const checkPortalAuthorization = (answer: unknown): CheckedAuthorization => {
  const { status, number, decisionDate } = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<
    string,
    unknown
  >;
  if (typeof status !== 'string' || !STATUSES.has(status)) {
    return {
      refused:
        "the portal's authorization status is not one of approved, partially approved, denied, pended, not found",
    };
  }
  const known = status as PortalAuthorizationRecord['status'];
  if (known === 'not_found') return { record: { status: known, number: null, decisionDate: null } };
  if (number !== undefined && (typeof number !== 'string' || !AUTHORIZATION_NUMBER.test(number))) {
    return { refused: "the portal's authorization number is not 1 to 50 letters, digits or hyphens" };
  }
  if (decisionDate !== undefined && (typeof decisionDate !== 'string' || !isIsoDate(decisionDate))) {
    return { refused: "the portal's decision date is not a date of the form YYYY-MM-DD" };
  }
  return { record: { status: known, number: number ?? null, decisionDate: decisionDate ?? null } };
};
