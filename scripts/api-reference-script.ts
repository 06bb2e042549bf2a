/**
 * The API reference page's renderer, Scalar's standalone script, taken out of the pinned
 * @scalar/api-reference tarball into lib/openapi/generated/ by `npm run build:openapi`; its route ships
 * it beside its bundle (docs/openapi.md, "The reference page"). Installing the package instead brought
 * 266 packages (Vue, an AI chat SDK, icon sets) for this one file.
 */
import { fileURLToPath } from 'node:url';
import { API_REFERENCE_SCRIPT } from '#lib/routes/route-table';
import { ensureVendoredFile, type VendoredFile } from './vendored-file.ts';

/**
 * To update: the new version's `npm view @scalar/api-reference@<version> dist.integrity`, then run
 * `npm run build:openapi`: it refuses the file and prints its SHA-256, the last value to pin.
 */
export const SCALAR_STANDALONE: VendoredFile = {
  spec: '@scalar/api-reference@1.72.1',
  integrity: 'sha512-XpEJ0rfc/cXbCrR+iC4kK0o/WwX2dTtGQbT049OlPKAHD6IMIFdTeGz2r+M27P2EDWKyUITRm/NzlP8z2pw/Ow==',
  path: 'package/dist/browser/standalone.js',
  sha256: 'bf091006bdc3af6067af77c2f534812e3e633e94a94e87138069f570f33b762c',
};

/** The script in place (fetched only when missing or not the pinned one); a line to print when it was fetched. */
export const ensureApiReferenceScript = async (): Promise<string> => {
  const target = fileURLToPath(new URL(`../lib/openapi/generated/${API_REFERENCE_SCRIPT}`, import.meta.url));
  const fetched = await ensureVendoredFile(SCALAR_STANDALONE, target);
  return fetched
    ? `extracted the reference page's renderer from ${SCALAR_STANDALONE.spec} to lib/openapi/generated/\n`
    : '';
};
