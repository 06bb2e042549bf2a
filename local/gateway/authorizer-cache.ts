import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import type { Env } from '#lib/config/environment';
import { GATEWAY_LIMITS } from '#lib/http/gateway-responses';

/* The authorizer's side of the gateway: its cache, and the cache's lifetime. */

/** LOCAL_AUTHORIZER_CACHE_TTL: whole seconds, 0 to 3600 as API Gateway allows; the deployed value when unset. */
export const authorizerCacheTtlFromEnv = (env: Env): number => {
  const raw = env.LOCAL_AUTHORIZER_CACHE_TTL;
  if (raw === undefined || raw.trim() === '') return GATEWAY_LIMITS.authorizerCacheTtlSeconds;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 3600) {
    throw new Error(`LOCAL_AUTHORIZER_CACHE_TTL must be whole seconds from 0 to 3600, not ${raw}.`);
  }
  return value;
};

/**
 * API Gateway's authorizer cache: an Allow or Deny answer is kept per identity source (the x-api-key
 * value) for `ttlSeconds`; a refusal (401) or a failure is not kept, so the next request asks again.
 */
export const authorizerCache = (ttlSeconds: number, now: () => number = Date.now) => {
  const answers = new Map<string, { result: APIGatewayAuthorizerResult; until: number }>();
  return {
    get(apiKey: string): APIGatewayAuthorizerResult | undefined {
      const cached = answers.get(apiKey);
      if (cached && cached.until > now()) return cached.result;
      if (cached) answers.delete(apiKey);
      return undefined;
    },
    set(apiKey: string, result: APIGatewayAuthorizerResult) {
      if (ttlSeconds <= 0) return;
      // Only keys the authorizer accepted are kept, so the map is bounded by the keys in use; expired ones go here.
      const time = now();
      for (const [key, entry] of answers) if (entry.until <= time) answers.delete(key);
      answers.set(apiKey, { result, until: time + ttlSeconds * 1000 });
    },
  };
};

export type AuthorizerCache = ReturnType<typeof authorizerCache>;
