import type { ClaimItem, ClaimSupportingInfo, Extension } from '@medplum/fhirtypes';
import { codedExtension, EXTENSIONS, X12 } from './codes.ts';

/*
 * A Claim update's items and supportingInfo (PAS "Updating Authorization Requests", spec-68..72): every
 * entry of the replaced Claim is there with its sequence, now with the request's current details. An
 * entry still in the request keeps its sequence (matched by what it is: an item by its service, a
 * supportingInfo entry by its category and document or text) and is flagged `changed` when its details
 * differ; a new one is `added` after the highest sequence so far; one the request no longer has is
 * carried over cancelled (infoCancelled, and an item's certification type 3) and flagged `changed`.
 * Entries cancelled before are carried as they were, without a flag (spec-72: only this version's changes).
 */

type Entry = ClaimItem | ClaimSupportingInfo;

const isCancelled = (entry: Entry) =>
  entry.modifierExtension?.some(
    (extension) => extension.url === EXTENSIONS.infoCancelled && extension.valueBoolean === true,
  ) ?? false;

const withExtensions = <T extends Entry>(entry: T, extension: Extension[]): T => {
  const { extension: _dropped, ...rest } = entry;
  return (extension.length > 0 ? { ...rest, extension } : rest) as T;
};

/** The entry as the replaced Claim had it, without its change flag and our id (an id maps today's request). */
const carried = <T extends Entry>(entry: T): T => {
  const { id: _id, ...rest } = entry;
  return withExtensions(
    rest as T,
    (entry.extension ?? []).filter((extension) => extension.url !== EXTENSIONS.infoChanged),
  );
};

const flagged = <T extends Entry>(entry: T, change: 'added' | 'changed'): T =>
  withExtensions(entry, [...(entry.extension ?? []), { url: EXTENSIONS.infoChanged, valueCode: change }]);

/** JSON with sorted keys: a Claim read back from storage need not keep its keys' order. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const fields = Object.entries(value).filter(([, field]) => field !== undefined);
  fields.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${fields.map(([key, field]) => `${JSON.stringify(key)}:${canonical(field)}`).join(',')}}`;
};

const sameDetails = (before: Entry, now: Entry) => {
  const { sequence: _a, ...a } = carried(before);
  const { sequence: _b, ...b } = carried(now);
  return canonical(a) === canonical(b);
};

interface Flagging<T extends Entry> {
  /** What the entry is, whatever its details. */
  keyOf: (entry: T) => string;
  /** The entry, cancelled. */
  cancel: (entry: T) => T;
}

function flaggedEntries<T extends Entry>(previous: readonly T[], current: readonly T[], flagging: Flagging<T>): T[] {
  const before = previous.map(carried);
  const open = before.filter((entry) => !isCancelled(entry));
  const matched = new Set<T>();
  let last = Math.max(0, ...before.map((entry) => entry.sequence));
  const entries: T[] = before.filter(isCancelled);
  for (const entry of current) {
    const match = open.find(
      (candidate) => !matched.has(candidate) && flagging.keyOf(candidate) === flagging.keyOf(entry),
    );
    if (!match) {
      entries.push(flagged({ ...entry, sequence: ++last }, 'added'));
      continue;
    }
    matched.add(match);
    const kept = { ...entry, sequence: match.sequence };
    entries.push(sameDetails(match, entry) ? kept : flagged(kept, 'changed'));
  }
  for (const entry of open) if (!matched.has(entry)) entries.push(flagged(flagging.cancel(entry), 'changed'));
  return entries.sort((a, b) => a.sequence - b.sequence);
}

const codeOf = (concept: { coding?: { system?: string; code?: string }[] } | undefined) =>
  concept?.coding?.map((coding) => `${coding.system ?? ''}|${coding.code ?? ''}`).join(' ') ?? '';

const cancelledFlag: Extension = { url: EXTENSIONS.infoCancelled, valueBoolean: true };

/** An item cancelled: the modifier, and its certification type 3 (spec-70). */
const cancelItem = (item: ClaimItem): ClaimItem =>
  withExtensions({ ...item, modifierExtension: [...(item.modifierExtension ?? []), cancelledFlag] }, [
    ...(item.extension ?? []).filter((extension) => extension.url !== EXTENSIONS.certificationType),
    codedExtension(EXTENSIONS.certificationType, X12.certificationType, '3'),
  ]);

export const updatedItems = (previous: readonly ClaimItem[], current: readonly ClaimItem[]) =>
  flaggedEntries(previous, current, { keyOf: (item) => codeOf(item.productOrService), cancel: cancelItem });

/** An attachment by its control number (our attachment id), a note by its text, a patient event by its category. */
const supportingKeyOf = (entry: ClaimSupportingInfo) => {
  const control = entry.extension
    ?.find((extension) => extension.url === EXTENSIONS.documentInformation)
    ?.extension?.find((part) => part.url === 'controlNumber')?.valueString;
  return `${codeOf(entry.category)}#${control ?? entry.valueString ?? ''}`;
};

export const updatedSupportingInfo = (
  previous: readonly ClaimSupportingInfo[],
  current: readonly ClaimSupportingInfo[],
) =>
  flaggedEntries(previous, current, {
    keyOf: supportingKeyOf,
    cancel: (entry) => ({ ...entry, modifierExtension: [...(entry.modifierExtension ?? []), cancelledFlag] }),
  });
