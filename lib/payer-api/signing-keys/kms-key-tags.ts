/**
 * The tags every payer signing key in KMS carries (kms-key-keeper.ts sets them when an operator creates
 * one). The signing function's IAM grant is conditioned on the purpose tag (attribute-based: the keys are
 * made at run time, after the deployment), so it can sign with these keys and with no other key of the
 * account (infra/constructs/payer-assertion-signing.ts).
 */
export const PAYER_KEY_PURPOSE_TAG = 'service-review:purpose';
export const PAYER_KEY_PURPOSE = 'payer-assertion-signing';
/** Which API client the key signs for: for the operator's eyes and CloudTrail; the signer checks the table. */
export const PAYER_KEY_CLIENT_TAG = 'service-review:client-id';
