import type { ClaimItem, ClaimSupportingInfo } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { bundleEntries } from '#lib/payer-api/pas/bundle-entries';
import { updatedItems, updatedSupportingInfo } from '#lib/payer-api/pas/claim-update-entries';
import { EXTENSIONS } from '#lib/payer-api/pas/codes';

/** A Claim update's entries (PAS spec-68..72): sequences kept, each change flagged against the replaced Claim. */
const CPT = 'http://www.ama-assn.org/go/cpt';
const item = (sequence: number, code: string, quantity: number): ClaimItem => ({
  sequence,
  productOrService: { coding: [{ system: CPT, code }] },
  quantity: { value: quantity },
  extension: [{ url: EXTENSIONS.certificationType, valueCodeableConcept: { coding: [{ system: 'x12', code: 'I' }] } }],
});

const flags = (entries: readonly (ClaimItem | ClaimSupportingInfo)[]) =>
  entries.map((entry) => [
    entry.sequence,
    entry.extension?.find((extension) => extension.url === EXTENSIONS.infoChanged)?.valueCode ?? null,
    entry.modifierExtension?.some((extension) => extension.url === EXTENSIONS.infoCancelled) ?? false,
  ]);

describe('updatedItems', () => {
  it('keeps sequences by service, flags changed, added and cancelled items, and cancels with type 3', () => {
    const before = [item(1, '72148', 1), item(2, '72149', 2)];
    const now = [item(1, '72150', 1), item(2, '72148', 3)];
    const updated = updatedItems(before, now);
    expect(flags(updated)).toEqual([
      [1, 'changed', false],
      [2, 'changed', true],
      [3, 'added', false],
    ]);
    expect(updated[0]).toMatchObject({ productOrService: { coding: [{ code: '72148' }] }, quantity: { value: 3 } });
    const cancelled = updated[1]!.extension!.find((extension) => extension.url === EXTENSIONS.certificationType);
    expect(cancelled?.valueCodeableConcept?.coding?.[0]?.code).toBe('3');
  });

  it('leaves an unchanged item unflagged, whatever the order of its keys as stored', () => {
    const stored = JSON.parse(
      JSON.stringify(item(1, '72148', 1), [
        'sequence',
        'quantity',
        'value',
        'productOrService',
        'coding',
        'system',
        'code',
        'extension',
        'url',
        'valueCodeableConcept',
      ]),
    );
    expect(flags(updatedItems([stored], [item(1, '72148', 1)]))).toEqual([[1, null, false]]);
  });

  it('carries an item cancelled by an earlier update as it was, without a flag (spec-72)', () => {
    const [, cancelled] = updatedItems([item(1, '72148', 1), item(2, '72149', 1)], [item(1, '72148', 1)]);
    const updated = updatedItems([item(1, '72148', 1), cancelled!], [item(1, '72148', 1)]);
    expect(flags(updated)).toEqual([
      [1, null, false],
      [2, null, true],
    ]);
  });
});

describe('updatedSupportingInfo', () => {
  const note = (sequence: number, text: string): ClaimSupportingInfo => ({
    sequence,
    category: { coding: [{ code: 'freeFormMessage' }] },
    valueString: text,
  });

  it('matches entries by category and content: a new note is added, a gone one cancelled', () => {
    expect(flags(updatedSupportingInfo([note(1, 'a'), note(2, 'b')], [note(1, 'b'), note(2, 'c')]))).toEqual([
      [1, 'changed', true],
      [2, null, false],
      [3, 'added', false],
    ]);
  });
});

describe('bundleEntries of an update', () => {
  it('names resources on the first claim and the Claim on its own identifier', () => {
    const update = bundleEntries('update-1', 'claim-1');
    expect(update.fullUrlOf('patient')).toBe(bundleEntries('claim-1').fullUrlOf('patient'));
    expect(update.fullUrlOf('claim')).toBe(bundleEntries('update-1').fullUrlOf('claim'));
    expect(update.fullUrlOf('claim')).not.toBe(bundleEntries('claim-1').fullUrlOf('claim'));
  });
});
