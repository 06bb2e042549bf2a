import type { Keyring } from '#lib/crypto/keyring';
import { sealSecret } from '#lib/crypto/seal';
import { secretsKeyring } from '#lib/crypto/secrets-keyring';
import { encryptionContextOf, type SigningSecretSealer } from './signing-secrets.ts';

/** Seals with the configured secrets keyring (lib/crypto/secrets-keyring.ts): create and rotate-secret only. */
export const signingSecretSealer =
  (keyring: () => Keyring = secretsKeyring): SigningSecretSealer =>
  (ref, secret) =>
    sealSecret(keyring(), secret, encryptionContextOf(ref));
