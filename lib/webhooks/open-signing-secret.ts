import type { Keyring } from '#lib/crypto/keyring';
import { openSecret } from '#lib/crypto/open';
import { secretsKeyring } from '#lib/crypto/secrets-keyring';
import { encryptionContextOf, type SigningSecretOpener } from './signing-secrets.ts';

/** Opens with the configured secrets keyring: for the delivery that signs, and nothing else. */
export const signingSecretOpener =
  (keyring: () => Keyring = secretsKeyring): SigningSecretOpener =>
  (ref, sealed) =>
    openSecret(keyring(), sealed, encryptionContextOf(ref));
