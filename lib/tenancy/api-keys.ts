import { createHash, randomBytes } from 'node:crypto';

/** API keys are 256 random bits, shown once; only their SHA-256 is stored. */
export const API_KEY_PREFIX = 'srk_';

export const generateApiKey = (): string => `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

export const hashApiKey = (apiKey: string): string => createHash('sha256').update(apiKey, 'utf8').digest('hex');

/** A cheap shape check before any table read, so junk keys cost nothing. */
export const looksLikeApiKey = (value: string | undefined): value is string =>
  typeof value === 'string' && value.length >= 16 && value.length <= 128 && /^[\x21-\x7e]+$/.test(value);
