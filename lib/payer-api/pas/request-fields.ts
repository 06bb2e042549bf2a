/**
 * Reading a stored request for the PAS mapping. The document was validated when it was stored, except
 * procedures (stored as sent since 2025-04-07), and older documents may predate today's schema, so every
 * field is read defensively: a value of the wrong kind counts as absent, never as an error.
 */

import type { Period } from '@medplum/fhirtypes';
import type { MappingProblem } from './mapping-context.ts';

export type Fields = Record<string, unknown>;

export const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The object at a field, or an empty one: an absent section reads like a section with nothing in it. */
export const fieldsOf = (value: unknown): Fields => (isFields(value) ? value : {});

/** A non-blank string (trimmed), or a finite number as digits; anything else is null. */
export const textOf = (value: unknown): string | null => {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
};

/** Where the mappers record problems. */
interface Problems {
  problems: MappingProblem[];
}

export const addProblem = (
  request: Problems,
  path: string,
  reason: MappingProblem['reason'],
  message: string,
): void => {
  request.problems.push({ path, reason, message });
};

/** The field's text, recording it as missing when it has none. */
export const requiredText = (request: Problems, fields: Fields, path: string, message: string): string | null => {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const value = textOf(fields[name]);
  if (value === null) addProblem(request, path, 'missing', message);
  return value;
};

/** YYYY-MM-DD naming a day of the calendar (no 2026-02-30), as FHIR `date` and X12 D8 need. */
const isCalendarDate = (text: string): boolean => {
  const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!parts) return false;
  const [year, month, day] = parts.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
};

/** A date field's value when it is a calendar date; anything else is absent (the schema checked it on store). */
export const dateOf = (value: unknown): string | null => {
  const text = textOf(value);
  return text !== null && isCalendarDate(text) ? text : null;
};

/** The request's dates of service: one day, a period (an end may be open), or none. */
export type ServiceDates = { day: string } | { period: Period } | null;

export const serviceDatesOf = (document: Fields): ServiceDates => {
  const from = dateOf(document.fromDate);
  const to = dateOf(document.toDate);
  if (from !== null && (to === null || to === from)) return { day: from };
  if (from === null && to === null) return null;
  return { period: { ...(from !== null ? { start: from } : {}), ...(to !== null ? { end: to } : {}) } };
};

/** The dates as a period, a single day from its start to its end. */
export const periodOf = (dates: NonNullable<ServiceDates>): Period =>
  'day' in dates ? { start: dates.day, end: dates.day } : dates.period;
