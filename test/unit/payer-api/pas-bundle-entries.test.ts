import type { Patient } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { bundleEntries, nameBasedUuid } from '#lib/payer-api/pas/bundle-entries';

describe('nameBasedUuid', () => {
  it('is RFC 9562 version 5: the RFC’s own example', () => {
    expect(nameBasedUuid('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  it('is the same for the same name, and another for another name', () => {
    expect(nameBasedUuid('a')).toBe(nameBasedUuid('a'));
    expect(nameBasedUuid('a')).not.toBe(nameBasedUuid('b'));
    expect(nameBasedUuid('a')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('bundleEntries', () => {
  const patient = (family: string): Patient => ({ resourceType: 'Patient', name: [{ family }] });

  it('keeps the first resource of a key and answers the same typed reference for it again', () => {
    const entries = bundleEntries('submission-1');
    const first = entries.add('practitioner:1234567893', patient('First'));
    const again = entries.add('practitioner:1234567893', patient('Second'));
    expect(again).toEqual(first);
    expect(first).toEqual({ reference: entries.fullUrlOf('practitioner:1234567893'), type: 'Patient' });
    expect(entries.list()).toEqual([{ fullUrl: first.reference, resource: patient('First') }]);
  });

  it('derives fullUrls from the Bundle identifier: the same in a retry, others in another submission', () => {
    expect(bundleEntries('submission-1').fullUrlOf('patient')).toBe(bundleEntries('submission-1').fullUrlOf('patient'));
    expect(bundleEntries('submission-1').fullUrlOf('patient')).not.toBe(
      bundleEntries('submission-2').fullUrlOf('patient'),
    );
    expect(bundleEntries('submission-1').fullUrlOf('patient')).toMatch(/^urn:uuid:/);
  });
});
