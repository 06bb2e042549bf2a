import { describe, expect, it } from 'vitest';
import { ABANDONED_SLOT_SECONDS, reconciledSlots } from '#lib/attachments/attachment-slots';
import type { AttachmentRecord } from '#lib/entities/attachment';
import { type AttachmentSlots, attachmentSlotsEntity } from '#lib/entities/attachment';

const now = new Date('2026-03-01T12:00:00.000Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
const ids = { clientId: 'c1', externalId: 'A-1' };

const record = (attachmentId: string, createdAt = ago(3600)): AttachmentRecord => ({
  ...ids,
  attachmentId,
  objectKey: `c1/requests/A-1/attachments/${attachmentId}`,
  fileName: 'a.pdf',
  contentType: 'application/pdf',
  size: 10,
  sha256: 'ab'.repeat(32),
  uploadMethod: 'direct',
  status: 'available',
  version: 2,
  createdAt,
  updatedAt: createdAt,
});

const slotsOf = (slots: Record<string, string>, version = 7): AttachmentSlots => ({
  ...ids,
  slots,
  version,
  createdAt: ago(86_400),
  updatedAt: ago(60),
});

describe('reconciledSlots', () => {
  it('changes nothing when every record has its slot and every slot its record', () => {
    const current = slotsOf({ a: ago(3600), b: ago(10) });
    expect(reconciledSlots(ids, current, [record('a'), record('b')], now)).toBeUndefined();
  });

  it('sets the slots up from the records when there are none yet (a first upload, or records from before slots)', () => {
    expect(reconciledSlots(ids, undefined, [], now)).toEqual({
      ...ids,
      slots: {},
      version: 1,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    });
    const created = ago(7200);
    expect(reconciledSlots(ids, undefined, [record('a', created), record('b')], now)?.slots).toEqual({
      a: created,
      b: ago(3600),
    });
  });

  it('frees a slot without a record once it is older than any upload in flight, and keeps a younger one', () => {
    const current = slotsOf({
      kept: ago(3600),
      leaked: ago(ABANDONED_SLOT_SECONDS + 1),
      inFlight: ago(ABANDONED_SLOT_SECONDS - 1),
    });
    expect(reconciledSlots(ids, current, [record('kept')], now)).toEqual({
      ...current,
      slots: { kept: ago(3600), inFlight: ago(ABANDONED_SLOT_SECONDS - 1) },
      version: 8,
      updatedAt: now.toISOString(),
    });
    // Only young slots without records: nothing to correct, the refusal stands.
    expect(reconciledSlots(ids, slotsOf({ inFlight: ago(1) }), [], now)).toBeUndefined();
  });

  it('gives a record that has lost its slot one, dated by the record', () => {
    const current = slotsOf({ a: ago(3600) });
    expect(reconciledSlots(ids, current, [record('a'), record('b', ago(120))], now)?.slots).toEqual({
      a: ago(3600),
      b: ago(120),
    });
  });

  it('is stored as the AttachmentSlots item in the request’s item collection, outside the attachments’ prefix', () => {
    const item = attachmentSlotsEntity.toItem(slotsOf({ a: ago(1) }, 3));
    expect(item).toEqual({
      pk: 'CLIENT#c1#REQ#A-1',
      sk: 'ATTACHMENTS',
      entity: 'AttachmentSlots',
      clientId: 'c1',
      externalId: 'A-1',
      slots: { a: ago(1) },
      version: 3,
      createdAt: ago(86_400),
      updatedAt: ago(60),
    });
    expect(item.sk.startsWith('ATT#')).toBe(false);
    expect(attachmentSlotsEntity.fromItem(item)).toEqual(slotsOf({ a: ago(1) }, 3));
  });
});
