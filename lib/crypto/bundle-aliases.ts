/**
 * esbuild aliases for the functions that bundle the AWS Encryption SDK (create and replace portal
 * account, the browser workers): three packages the SDK imports, replaced by small stand-ins
 * (docs/security.md, "What it costs"). Paths are relative to the project root, as esbuild's
 * `alias` option takes them. Safe only with the suite envelope.ts pins (no signature): asn1.js is
 * then never called, and bn.js only for a frame's content length. Nothing else in the functions
 * imports these packages (checked by test/unit/crypto-bundle-shims.test.ts).
 *
 * For NodejsFunction: `esbuildArgs` of `--alias:<package>=<path>` per entry.
 */
export const ENCRYPTION_SDK_ALIASES: Readonly<Record<string, string>> = {
  // Node's own streams: readable-stream is their copy for browsers (37 KB).
  'readable-stream': './lib/crypto/bundle-shims/readable-stream.cjs',
  // The integer operations the SDK calls, on BigInt (bn.js: 87 KB).
  'bn.js': './lib/crypto/bundle-shims/bn.cjs',
  // Signing suites only (asn1.js: 24 KB).
  'asn1.js': './lib/crypto/bundle-shims/asn1.cjs',
};
