import { randomBytes } from 'node:crypto';
import type { EncryptionContext } from '#lib/crypto/keyring';
import type { SealedSecret } from '#lib/crypto/sealed-secret';

/**
 * Webhook signing secrets: made here, sealed with the project's envelope encryption (lib/crypto,
 * docs/security.md) under a context naming the client and the subscription, so a sealed secret copied
 * to another subscription's item does not open. Shown to the client once (create, rotate-secret);
 * sealed there (seal-signing-secret.ts), opened only where a delivery is signed (open-signing-secret.ts):
 * each side bundles only its half of the Encryption SDK. Never logged.
 */
const SIGNING_SECRET_PREFIX = 'whsec_';
/** Standard Webhooks asks for 24 to 64 random bytes. */
const SECRET_BYTES = 32;

export const PURPOSE = 'webhook-signing-secret';

export interface WebhookRef {
  clientId: string;
  webhookId: string;
}

/** A fresh secret: `whsec_` and the base64 of 32 random bytes (what the standardwebhooks package takes). */
export const newSigningSecret = () => `${SIGNING_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

export const encryptionContextOf = (ref: WebhookRef): EncryptionContext => ({
  purpose: PURPOSE,
  clientId: ref.clientId,
  webhookId: ref.webhookId,
});

export type SigningSecretSealer = (ref: WebhookRef, secret: string) => Promise<SealedSecret>;

/** Opens a subscription's signing secret, for the delivery that signs with it. Keep it in memory only. */
export type SigningSecretOpener = (ref: WebhookRef, sealed: SealedSecret) => Promise<string>;
