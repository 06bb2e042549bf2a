import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';

/**
 * The payer's registered clients: how a provider organization gets a client_id, beside the JWKS URL the
 * payer verifies its assertions with (SMART Backend Services). In memory, like the sandbox portal's
 * state: a restart forgets them, which is why the stack's seed may choose a client's id (registerClient).
 */
export type AnswerShape = 'bundle' | 'parameters';
const ANSWER_SHAPES: readonly AnswerShape[] = ['bundle', 'parameters'];

export interface RegisteredClient {
  clientId: string;
  name: string;
  jwksUri: string;
  /** How $submit and $inquire answers are shaped for this client: a bare Bundle, or Parameters{return}. */
  answerShape: AnswerShape;
  /** The client's keys, fetched from jwksUri when an assertion needs them and kept a while (jose). */
  keys: JWTVerifyGetKey;
}

export interface ClientRegistration {
  jwksUri: string;
  name: string;
  answerShape?: AnswerShape;
  /** In process only (the stack's seed): a stable id, so a connection stored before a restart still works. */
  clientId?: string;
}

/** A registration the payer refuses, with a message that says what to fix. */
export class RegistrationRefused extends Error {}

const CLIENT_ID = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_NAME = 200;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https anywhere; http only to this machine, as the local stack allows for the sandbox portal. */
const jwksUrlOf = (raw: unknown): URL => {
  if (typeof raw !== 'string' || raw.length > 2048 || !URL.canParse(raw)) {
    throw new RegistrationRefused('jwks_uri must be an absolute URL.');
  }
  const url = new URL(raw);
  const loopback = LOOPBACK.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.username || url.password || url.hash) {
    throw new RegistrationRefused('jwks_uri must not carry credentials or a fragment.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new RegistrationRefused('jwks_uri must be https (http only on a loopback host).');
  }
  return url;
};

export interface ClientRegistryOptions {
  /** How long fetched keys are kept, and the least time between two fetches for an unknown kid (ms). */
  jwksCacheMaxAgeMs: number;
  jwksCooldownMs: number;
}

export const clientRegistry = (options: ClientRegistryOptions) => {
  const clients = new Map<string, RegisteredClient>();
  return {
    /** Registers a client; its id is random unless the caller (in process) chose one. */
    register(registration: ClientRegistration): RegisteredClient {
      const url = jwksUrlOf(registration.jwksUri);
      const name = typeof registration.name === 'string' ? registration.name.trim() : '';
      if (!name || name.length > MAX_NAME) {
        throw new RegistrationRefused(`client_name must be 1 to ${MAX_NAME} characters.`);
      }
      const answerShape = registration.answerShape ?? 'bundle';
      if (!ANSWER_SHAPES.includes(answerShape)) {
        throw new RegistrationRefused(`answer_shape must be one of ${ANSWER_SHAPES.join(', ')}.`);
      }
      const clientId = registration.clientId ?? `sbx-pas-${randomBytes(12).toString('hex')}`;
      if (!CLIENT_ID.test(clientId)) throw new RegistrationRefused('client_id must be 1 to 64 of [A-Za-z0-9._-].');
      const keys = createRemoteJWKSet(url, {
        cacheMaxAge: options.jwksCacheMaxAgeMs,
        cooldownDuration: options.jwksCooldownMs,
      });
      const client = { clientId, name, jwksUri: url.href, answerShape, keys };
      // Registering a known id again replaces it (a restarted seed, a key set moved to another URL).
      clients.set(clientId, client);
      return client;
    },
    get: (clientId: string) => clients.get(clientId),
    all: () => [...clients.values()],
  };
};

export type ClientRegistry = ReturnType<typeof clientRegistry>;
