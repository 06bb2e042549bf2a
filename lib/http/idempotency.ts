import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { makeHandlerIdempotent } from '@aws-lambda-powertools/idempotency/middleware';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { MiddlewareObj, Request } from '@middy/core';
import { dynamoClient } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { log } from '#lib/observability/logger';
import { TABLE_KEY, TTL_ATTRIBUTE } from '#lib/table';
import type { Scope } from '#lib/tenancy/scope';
import { type ApiEvent, scopeOf } from './api-event.ts';
import { badRequest } from './problem.ts';
import { fingerprintKeys, fingerprintsOf } from './request-fingerprint.ts';
import type { ApiResult } from './response.ts';

/**
 * Idempotent retries of the POSTs that create or start something, with Powertools' idempotency
 * utility on the service table. A request with an `Idempotency-Key` header:
 * - the first time: runs, and its response (status, headers, body) is kept for 24 hours;
 * - again with the same key and the same request: gets that response back, plus
 *   `Idempotent-Replayed: true`, and nothing runs;
 * - with the same key and another method, path or body: 422; while the first is still running: 409
 *   (both mapped in domain-errors.ts);
 * - when it fails (any thrown error: every 4xx and 5xx of a handler), keeps nothing, so a corrected
 *   retry with the same key runs.
 * Keys are the client's own (the authorizer's clientId is hashed in with the key). Without the header
 * nothing is read or written. The record keeps a keyed fingerprint of the request, never a plain
 * hash of it (bodies can hold secrets: request-fingerprint.ts).
 *
 * An endpoint opts in with `endpoint(handler, { idempotency: idempotentRequests() })`: the handler
 * module imports this file, so only those bundles carry Powertools.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const DEFAULT_IDEMPOTENCY_EXPIRY_SECONDS = 24 * 60 * 60;

export interface IdempotencyOptions {
  /** How long a key's response is kept and replayed; after that the key runs afresh. */
  expiresAfterSeconds?: number;
  /** The request fingerprint's keys, the current one first; by default this container's (request-fingerprint.ts). */
  fingerprintKeys?: () => Promise<Buffer[]>;
}

/** The two halves endpoint() registers at two places of its stack (see there). */
export interface IdempotencyMiddleware {
  /** before: validates the key, then locks it or replays; onError: releases the lock. */
  guard: MiddlewareObj<ApiEvent<unknown>, ApiResult>;
  /** after: keeps the response that is sent. */
  store: MiddlewareObj<ApiEvent<unknown>, ApiResult>;
}

/**
 * What Powertools sees of a request: `key`, whose hash names the record, and `request`, whose hash
 * must match on a retry. The scope comes from the authorizer, never from the request: an
 * organization-restricted key has its own keys, so it never replays what a key of another scope
 * created (unrestricted keys keep theirs). `request` is the request's fingerprint under the current
 * key and `earlier` under the rotation's older ones (request-fingerprint.ts): what Powertools
 * stores is its SHA-256 of that HMAC, of no use without the key.
 */
type RequestView = {
  key: string[];
  request: string;
  earlier: string[];
};

const isRequestView = (data: unknown): data is RequestView =>
  typeof data === 'object' && data !== null && Array.isArray((data as RequestView).earlier);

/** Powertools' "same key, another request" (by name: its classes stay out of domain-errors.ts too). */
const isMismatch = (error: unknown) => (error as Error)?.name === 'IdempotencyValidationError';

/**
 * Every record is its own partition, `IDEMPOTENCY#<sha256>`, rather than Powertools' one static
 * partition key for all: a record holds a whole response (up to a few hundred KB), and one
 * partition for every client's creations would cap their write rate. docs/data-model.md.
 */
const KEY_PREFIX = 'IDEMPOTENCY';
class IdempotencyRecords extends DynamoDBPersistenceLayer {
  protected override getKey(idempotencyKey: string): Record<string, AttributeValue> {
    return { [TABLE_KEY.partition]: { S: idempotencyKey }, [TABLE_KEY.sort]: { S: KEY_PREFIX } };
  }

  /**
   * A record fingerprinted under an earlier key of the rotation still matches its retry: Powertools
   * compares one hash, so the view's `request` (the current key's fingerprint) is tried first, then
   * each of `earlier`. Every read of a stored record for a request goes through here (2.35.0: the
   * failed lock's old item, and getRecord).
   */
  override processExistingRecord(
    ...[stored, processed]: Parameters<DynamoDBPersistenceLayer['processExistingRecord']>
  ) {
    try {
      return super.processExistingRecord(stored, processed);
    } catch (error) {
      if (!isRequestView(processed) || !isMismatch(error)) throw error;
      const view: RequestView = processed;
      for (const request of view.earlier) {
        try {
          return super.processExistingRecord(stored, { ...view, request, earlier: [] });
        } catch (other) {
          if (!isMismatch(other)) throw other;
        }
      }
      throw error;
    }
  }
}

/** Visible ASCII and space: what every client can send and log. */
const VALID_KEY = new RegExp(`^[\\x20-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);

const invalidKey = () =>
  badRequest(
    `The ${IDEMPOTENCY_KEY_HEADER} header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters.`,
    { header: IDEMPOTENCY_KEY_HEADER },
  );

/** The key, undefined without the header; headers are lower-cased by then (endpoint.ts). */
const idempotencyKeyOf = (event: ApiEvent<unknown>): string | undefined => {
  const name = IDEMPOTENCY_KEY_HEADER.toLowerCase();
  if ((event.multiValueHeaders?.[name]?.length ?? 0) > 1) {
    throw badRequest(`Send one ${IDEMPOTENCY_KEY_HEADER} header.`, { header: IDEMPOTENCY_KEY_HEADER });
  }
  const key = event.headers?.[name];
  if (key === undefined || key === null) return undefined;
  if (!VALID_KEY.test(key)) throw invalidKey();
  return key;
};

/**
 * The request as compared: its JSON text as parsed (whitespace and number spelling do not count;
 * member order does, since documents are stored as sent); a multipart form is its fields and each
 * file's name, type, size and SHA-256 (MultipartForm.toJSON), whatever its boundary.
 */
const requestTextOf = (event: ApiEvent<unknown>) =>
  JSON.stringify([event.httpMethod, event.resource, event.pathParameters ?? {}, event.body]);

const viewOf = (event: ApiEvent<unknown>, key: string, keys: Buffer[], { clientId, organizationId }: Scope) => {
  const [request, ...earlier] = fingerprintsOf(keys, requestTextOf(event));
  return {
    key: organizationId === undefined ? [clientId, key] : [clientId, organizationId, key],
    request: request!,
    earlier,
  } satisfies RequestView;
};

const markReplayed = (response: unknown) => {
  const result = response as ApiResult;
  return { ...result, headers: { ...result.headers, [REPLAYED_HEADER]: 'true' } };
};

type PowertoolsMiddleware = ReturnType<typeof makeHandlerIdempotent>;
type MiddyRequest = Request<ApiEvent<unknown>, ApiResult>;

export const idempotentRequests = (options: IdempotencyOptions = {}): IdempotencyMiddleware => {
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    payloadValidationJmesPath: 'request',
    // The guard below skips requests without a key; one that reaches Powertools always has one.
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: options.expiresAfterSeconds ?? DEFAULT_IDEMPOTENCY_EXPIRY_SECONDS,
    hashFunction: 'sha256',
    responseHook: markReplayed,
  });
  const keys = options.fingerprintKeys ?? fingerprintKeys;
  // Built on first use: TABLE_NAME is read at run time, like every store's.
  let powertools: PowertoolsMiddleware | undefined;
  const middleware = () =>
    (powertools ??= makeHandlerIdempotent({
      persistenceStore: new IdempotencyRecords({
        tableName: tableName(),
        awsSdkV3Client: dynamoClient,
        keyAttr: TABLE_KEY.partition,
        sortKeyAttr: TABLE_KEY.sort,
        expiryAttr: TTL_ATTRIBUTE,
      }),
      config,
      keyPrefix: KEY_PREFIX,
    }));
  const run = (phase: 'before' | 'after' | 'onError', request: unknown) =>
    (middleware()[phase] as (request: unknown) => unknown)(request);

  // The requests that wrote an in-progress record. Powertools 2.35's onError deletes the key's record
  // whatever failed, its own refusal included; a 409 or 422 must leave the other request's record be
  // (idempotency-middleware.test.ts fails without this).
  const locked = new WeakSet<MiddyRequest>();

  return {
    guard: {
      before: async (request) => {
        const key = idempotencyKeyOf(request.event);
        if (key === undefined) return undefined;
        const view = viewOf(request.event, key, await keys(), scopeOf(request.event));
        const replay = await run('before', { ...request, event: view });
        if (replay !== undefined) return replay as ApiResult;
        locked.add(request);
        return undefined;
      },
      onError: async (request) => {
        if (!locked.delete(request)) return;
        try {
          await run('onError', request);
        } catch (error) {
          // The record then blocks the key (409) until its in-progress expiry: the function's timeout.
          log.warn('Idempotency record not released', { errorName: (error as Error).name });
        }
      },
    },
    store: {
      after: async (request) => {
        if (!locked.has(request)) return;
        await run('after', request);
        locked.delete(request);
      },
    },
  };
};
