import type { CodeableConcept, Coding } from '@medplum/fhirtypes';
import type { AuthorizationReason } from '#lib/entities/request';
import { codingsOf, isRecord, UnreadableAnswer } from './answer-json.ts';

/*
 * The checks every value of a payer's answer passes before it may be stored (docs/payer-api.md,
 * "What is kept"): a pattern and a length per kind of value. Two policies: a value the decision rests
 * on (an authorization number, a review action code, an item's sequence) that is out of form makes
 * the whole answer unreadable (UnreadableAnswer); a value that only informs (a date, a code, a text)
 * is dropped, and the answer is kept without it.
 */

/** What payers' authorization numbers look like, as the portal channel checks them: 1–50 letters, digits, hyphens. */
const AUTHORIZATION_NUMBER = /^[A-Za-z0-9-]{1,50}$/;
/** A code of a code system we keep (CPT, HCPCS, ICD-10, NDC, X12, FHIR issue types): 1–30 characters. */
const CODE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,29}$/;
/** A code system: an http(s) URL or an OID or UUID URN, at most 200 characters. */
const SYSTEM =
  /^(?:https?:\/\/[A-Za-z0-9.-]{1,100}(?:\/[A-Za-z0-9._~%-]*)*|urn:oid:[0-9.]{1,100}|urn:uuid:[0-9a-fA-F-]{36})$/;
const MAX_SYSTEM = 200;
/** A FHIR resource id (FHIR R4 `id`). */
const RESOURCE_ID = /^[A-Za-z0-9.-]{1,64}$/;
/** A business identifier's value (X12 TRN02 is 1–50 characters). */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$/;
/** A unit of a quantity: X12 673 codes (VS, DY, UN) or a short word. */
const UNIT = /^[A-Za-z0-9][A-Za-z0-9 ._/%-]{0,29}$/;
/** A FHIRPath expression or location: printable ASCII, no blank at either end, at most 300 characters. */
const EXPRESSION = /^[\x21-\x7E](?:[\x20-\x7E]{0,298}[\x21-\x7E])?$/;
/** A FHIR date or dateTime that names a day: the date, and the time with its zone when there is one. */
const DAY_OR_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d{1,9})?(?:Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00)))?$/;
/** Characters no text of ours holds: controls, format characters (bidi overrides, zero widths), private use, unassigned, lone surrogates. */
const UNSAFE_TEXT = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}]/u;

/** The longest text kept (reasons, issue details), in characters (code points). */
const MAX_TEXT = 500;
/** The largest quantity kept. */
const MAX_QUANTITY = 1_000_000_000;
/** The highest item sequence read. */
const MAX_SEQUENCE = 10_000;

const present = (value: unknown) => value !== undefined && value !== null;

/** The authorization number, null when absent; out of form, the answer is unreadable. */
export const authorizationNumberOf = (value: unknown, where: string): string | null => {
  if (!present(value)) return null;
  if (typeof value === 'string' && AUTHORIZATION_NUMBER.test(value)) return value;
  throw new UnreadableAnswer(`${where} is not 1 to 50 letters, digits or hyphens`);
};

/** An item's sequence: an integer from 1 to 10,000; anything else makes the answer unreadable. */
export const sequenceOf = (value: unknown): number => {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_SEQUENCE) return value;
  throw new UnreadableAnswer(`an item's sequence is not a whole number from 1 to ${MAX_SEQUENCE}`);
};

export const codeOf = (value: unknown): string | null => (typeof value === 'string' && CODE.test(value) ? value : null);

const systemOf = (value: unknown): string | null =>
  typeof value === 'string' && value.length <= MAX_SYSTEM && SYSTEM.test(value) ? value : null;

export const resourceIdOf = (value: unknown): string | null =>
  typeof value === 'string' && RESOURCE_ID.test(value) ? value : null;

export const identifierValueOf = (value: unknown): string | null =>
  typeof value === 'string' && IDENTIFIER.test(value) ? value : null;

export const expressionOf = (value: unknown): string | null =>
  typeof value === 'string' && EXPRESSION.test(value) ? value : null;

/** YYYY-MM-DD naming a day of the calendar (no 2026-02-30). */
const isDay = (year: number, month: number, day: number) => {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
};

/**
 * The day a FHIR date or dateTime names, as YYYY-MM-DD (the payer's own calendar day: the date part,
 * whatever the zone); null for a partial date (a year, a month), a day that does not exist, or anything else.
 */
export const dayOf = (value: unknown): string | null => {
  if (typeof value !== 'string' || value.length > 40) return null;
  const parts = DAY_OR_INSTANT.exec(value);
  if (!parts) return null;
  const [year, month, day] = parts.slice(1, 4).map(Number) as [number, number, number];
  return isDay(year, month, day) ? value.slice(0, 10) : null;
};

/** A FHIR date or dateTime naming a day (with its time and zone when it has them), as the payer wrote it; null otherwise. */
export const dateOrDateTimeOf = (value: unknown): string | null => (dayOf(value) === null ? null : (value as string));

/** A period's two days; null when neither reads as a day. */
export const periodOf = (value: unknown): { start: string | null; end: string | null } | null => {
  if (!isRecord(value)) return null;
  const period = { start: dayOf(value.start), end: dayOf(value.end) };
  return period.start === null && period.end === null ? null : period;
};

/** A quantity's value (0 to a billion) and unit (its unit, or else its code); null without a value in range. */
export const quantityOf = (value: unknown): { value: number; unit: string | null } | null => {
  if (!isRecord(value)) return null;
  const amount = value.value;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0 || amount > MAX_QUANTITY) return null;
  const unit = [value.unit, value.code].find((candidate) => typeof candidate === 'string' && UNIT.test(candidate));
  return { value: amount, unit: (unit as string | undefined) ?? null };
};

/**
 * A text of the payer's (a note, an issue's details) as we keep it: blanks (new lines, tabs) folded
 * to one space, at most MAX_TEXT characters (a longer one is cut and ends with "…"). A text holding
 * control or format characters (a bidi override, a zero width) is not kept at all: it is null.
 */
export const textOf = (value: unknown): string | null => {
  if (typeof value !== 'string') return null;
  // A huge text is not folded whole: what lies past four times the bound would be cut anyway.
  const characters = Array.from(
    value
      .slice(0, MAX_TEXT * 4)
      .replace(/\s+/gu, ' ')
      .trim(),
  );
  const cut = characters.length > MAX_TEXT || value.length > MAX_TEXT * 4;
  // Slicing may split a surrogate pair at the end: that half is not the payer's character.
  const last = characters.at(-1);
  if (cut && last !== undefined && /^[\uD800-\uDBFF]$/.test(last)) characters.pop();
  const kept = cut
    ? `${characters
        .slice(0, MAX_TEXT - 1)
        .join('')
        .trimEnd()}…`
    : characters.join('');
  if (kept === '' || kept === '…' || UNSAFE_TEXT.test(kept)) return null;
  return kept;
};

/** A coding's code and system, both in form; a coding without a system keeps null for it. */
export const codeAndSystemOf = (coding: Coding): { system: string | null; code: string } | null => {
  const code = codeOf(coding.code);
  if (code === null) return null;
  if (!present(coding.system)) return { system: null, code };
  const system = systemOf(coding.system);
  return system === null ? null : { system, code };
};

/**
 * A reason from a CodeableConcept: its first coding whose code (and system) are in form, with the
 * coding's display or else the concept's text. A concept with no such coding gives no reason.
 */
export const reasonOf = (concept: CodeableConcept | undefined): AuthorizationReason | null => {
  for (const coding of codingsOf(concept)) {
    const coded = codeAndSystemOf(coding);
    if (coded) return { ...coded, text: textOf(coding.display) ?? textOf(concept?.text) };
  }
  return null;
};
