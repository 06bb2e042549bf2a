import type { Coding, Extension } from '@medplum/fhirtypes';

/*
 * Walking a payer's answer, which is JSON anyone between us and the payer could have written: its
 * FHIR types (@medplum/fhirtypes) say what it should hold, these helpers what it does hold. Only
 * plain objects are walked (what JSON.parse makes), lists are read up to a bound, and every leaf
 * goes through answer-values.ts before it is kept.
 */

/** The payer's answer cannot be read as a PAS answer; `message` is ours and names no value of the payer's. */
export class UnreadableAnswer extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableAnswer';
  }
}

/**
 * A JSON object: not null, not a list, and with the prototype JSON.parse gives (or none). An object
 * built with another prototype (`{__proto__: …}` in code) would answer with inherited fields, so it
 * is not one.
 */
export const isRecord = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/**
 * The objects of a list, the first `max` entries read: anything else in the list (a string, a
 * number, null) is passed over, and a value that is not a list reads as an empty one.
 */
export const recordsOf = <T extends object>(list: unknown, max: number): T[] =>
  Array.isArray(list) ? (list.slice(0, max).filter(isRecord) as T[]) : [];

/** How many extensions, codings, adjudications… of one element are read; past it they are not looked at. */
export const MAX_LIST_READ = 50;

/** The extensions of an element with one of these URLs, in order. */
export const extensionsOf = (element: { extension?: Extension[] } | undefined, urls: readonly string[]): Extension[] =>
  recordsOf<Extension>(element?.extension, MAX_LIST_READ).filter((extension) => urls.includes(extension.url));

/** The first extension of an element with one of these URLs. */
export const extensionOf = (
  element: { extension?: Extension[] } | undefined,
  urls: readonly string[],
): Extension | undefined => extensionsOf(element, urls)[0];

/** The codings of a CodeableConcept (or of a value that should be one). */
export const codingsOf = (concept: unknown): Coding[] =>
  isRecord(concept) ? recordsOf<Coding>(concept.coding, MAX_LIST_READ) : [];

/** `resourceType` of a value, when it is an object that names one. */
export const resourceTypeOf = (value: unknown): string | undefined =>
  isRecord(value) && typeof value.resourceType === 'string' ? value.resourceType : undefined;
