import { createHash } from 'node:crypto';
import type { BundleEntry, Reference, Resource } from '@medplum/fhirtypes';

/*
 * The entries of a PAS Bundle besides the Claim. PAS wants each resource once (spec-14, spec-15: one
 * Practitioner per person) under a `urn:uuid:` fullUrl unique across submissions (spec-16, spec-17).
 * The uuids are name-based (RFC 9562 version 5) on the Bundle identifier and the resource's key, so a
 * retried $submit, which carries the same Bundle identifier, sends the very same Bundle.
 */

/** This mapping's own uuid namespace: any fixed uuid will do, it only has to be ours. */
const NAMESPACE = '5b0c8f0e-4a7d-4c2f-9a61-d3e2b7c49f10';

/** The version 5 uuid of a name in a namespace (ours unless told). */
export const nameBasedUuid = (name: string, namespace: string = NAMESPACE): string => {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** The key of the Claim's entry: its fullUrl is derived like every other entry's, and it goes first. */
export const CLAIM_KEY = 'claim';

export interface BundleEntries {
  /** The fullUrl of the resource of a key, in this Bundle. */
  fullUrlOf: (key: string) => string;
  /**
   * Adds the resource under its key, once: a second resource under the same key is the same person or
   * organization met again, and the first one stands. Answers the reference to the entry.
   */
  add: <T extends Resource>(key: string, resource: T) => Reference<T>;
  list: () => BundleEntry[];
}

/**
 * The entries of one Bundle. An update's resources are named on its first claim's identifier
 * (`namespace`), so the same resource keeps its fullUrl across the claims that reference it (spec-17
 * allows it) and the replaced Claim the update carries references them; each Claim is named on its own.
 */
export const bundleEntries = (bundleIdentifier: string, namespace: string = bundleIdentifier): BundleEntries => {
  const entries = new Map<string, BundleEntry>();
  const fullUrlOf = (key: string) =>
    `urn:uuid:${nameBasedUuid(`${key === CLAIM_KEY ? bundleIdentifier : namespace}\u0000${key}`)}`;
  return {
    fullUrlOf,
    add: <T extends Resource>(key: string, resource: T): Reference<T> => {
      const fullUrl = fullUrlOf(key);
      if (!entries.has(key)) entries.set(key, { fullUrl, resource });
      // The type too: a urn:uuid says nothing of what it names, and readers check references by type.
      return { reference: fullUrl, type: resource.resourceType };
    },
    list: () => [...entries.values()],
  };
};
