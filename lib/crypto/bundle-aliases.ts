/**
 * esbuild aliases of every deployed bundle (infra/constructs/service-function.ts BUNDLING) for two
 * packages only the AWS Encryption SDK imports (create and replace portal account, the browser
 * workers), replaced by small stand-ins (docs/security.md, "What it costs"). Paths are relative to
 * the project root, as esbuild's `alias` option takes them. Safe only with the suite envelope.ts pins
 * (no signature): asn1.js is then never called. Nothing else the functions bundle imports these
 * packages (checked by test/unit/crypto-bundle-shims.test.ts). bn.js stays the real one: a BigInt
 * stand-in would save 43 KB more, not worth replacing arithmetic inside an encryption library.
 */
export const ENCRYPTION_SDK_ALIASES: Readonly<Record<string, string>> = {
  // Node's own streams: readable-stream is their copy for browsers (37 KB).
  'readable-stream': './lib/crypto/bundle-shims/readable-stream.cjs',
  // Signing suites only (asn1.js: 24 KB).
  'asn1.js': './lib/crypto/bundle-shims/asn1.cjs',
};
