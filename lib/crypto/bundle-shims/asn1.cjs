'use strict';
/*
 * Stands in for asn1.js in deployed bundles. The Encryption SDK uses ASN.1 only for signing suites
 * (DER ECDSA signatures in serialize's ecdsa_signature, PEM keys in material-management's
 * pem_helpers); it defines their schemas at import, and encodes or decodes only when signing or
 * verifying. The suite is pinned to one without a signature (lib/crypto/envelope.ts): any use fails.
 */
// A function, not an arrow: the SDK also calls it with `new` (asn.bignum.BN).
function unavailable() {
  throw new Error('ASN.1 is not bundled: this function seals and opens without signatures only');
}

module.exports = {
  define: () => ({ encode: unavailable, decode: unavailable }),
  bignum: { BN: unavailable },
};
