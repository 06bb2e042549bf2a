import { createHash, randomBytes } from 'node:crypto';

/** API keys are 256 random bits, shown once; only their SHA-256 is stored. */
const API_KEY_PREFIX = 'srk_';

export const generateApiKey = (): string => `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

export const hashApiKey = (apiKey: string): string => createHash('sha256').update(apiKey, 'utf8').digest('hex');

/** A cheap shape check before any table read, so junk keys cost nothing. */
export const looksLikeApiKey = (value: string | undefined): value is string =>
  typeof value === 'string' && value.length >= 16 && value.length <= 128 && /^[\x21-\x7e]+$/.test(value);

/** Keys live at least an hour and at most a year when they expire at all. */
const EXPIRY_UNITS_MS = { h: 3_600_000, d: 86_400_000 } as const;
export const MIN_EXPIRY_MS = EXPIRY_UNITS_MS.h;
export const MAX_EXPIRY_MS = 365 * EXPIRY_UNITS_MS.d;

/** `90d`, `12h` → milliseconds; anything else (units, zero, over a year) is refused. */
export const parseExpiresIn = (value: string): number => {
  const match = /^([1-9][0-9]{0,5})([hd])$/.exec(value);
  const ms = match ? Number(match[1]) * EXPIRY_UNITS_MS[match[2] as 'h' | 'd'] : Number.NaN;
  if (!(ms >= MIN_EXPIRY_MS && ms <= MAX_EXPIRY_MS)) {
    throw new Error(`--expires-in takes whole hours or days (e.g. 12h, 90d), from 1h to 365d; got "${value}".`);
  }
  return ms;
};

export type ApiKeyState = 'active' | 'revoked' | 'expired';

/** Revocation wins over expiry: it is the operator's explicit act. */
export const apiKeyState = (key: { revokedAt?: string; expiresAt?: string }, now: Date): ApiKeyState => {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && Date.parse(key.expiresAt) <= now.getTime()) return 'expired';
  return 'active';
};

/**
 * lastUsedAt is kept to within this much: the authorizer writes it only when the stored value is
 * older, so a busy key costs one write per window rather than one per request.
 */
export const LAST_USED_RESOLUTION_MS = 15 * 60_000;
