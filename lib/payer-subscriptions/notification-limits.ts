/** What the notification route takes (docs/payer-api.md, "Notifications"); the OpenAPI document states the same. */

/** A notification with full-resource content carries PAS Response Bundles: 1 MiB holds many, and no more. */
export const NOTIFICATION_MAX_BYTES = 1024 * 1024;

/** Our subscription ids: random, URL-safe (a UUID or base64url). */
export const SUBSCRIPTION_ID_PATTERN = '^[A-Za-z0-9_-]{16,64}$';
