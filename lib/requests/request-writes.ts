import {
  changedByAnotherWrite,
  changedConcurrently,
  checkIfMatch,
  retryOnConflict,
  VersionConflict,
} from '#lib/concurrency';
import type { StoredRequest } from '#lib/entities/request';
import { AlreadyExists, NotFound } from '#lib/errors';
import { assertValid, type CompiledValidator } from '#lib/validation/validator';
import { applyMergePatch } from './merge-patch.ts';
import { etagOf, initialAuthorization, type RequestDocument, withoutExternalId } from './request-document.ts';
import type { RequestStore } from './request-store.ts';

/*
 * Writing requests (DESIGN.md): v1 PUT upserts, v1 PATCH merge-patches an existing request and validates
 * the result, v1.1 POST creates (409 if it exists), v1.1 PUT replaces an existing one (404 if missing).
 * If-Match guards every write.
 */

type Written = { request: StoredRequest; created: boolean };

/**
 * How long a read-modify-write without If-Match (merge patches) keeps retrying while concurrent writers
 * win before it gives up with 409 and Retry-After: pauses drawn from a window that doubles with each
 * conflict, in slots of how long an attempt took (so hundreds of writers spread out even when the store
 * is slow), and answers within a budget far under the 29 s an API function may run, sooner when the
 * contention will outlast it. docs/data-model.md, "Concurrent writes".
 */
const UNGUARDED_WRITE_RETRIES = { attempts: 20, backoffMs: 10, maxBackoffMs: 5_000, budgetMs: 10_000 } as const;

/** Read, compute the next document from the current one, write conditionally on the version read. */
function readModifyWrite(
  store: RequestStore,
  clientId: string,
  externalId: string,
  next: (current: StoredRequest | undefined) => Record<string, unknown>,
  options: { ifMatch?: string | undefined; mustExist?: boolean },
): Promise<Written> {
  return retryOnConflict(
    async () => {
      const current = await store.get(clientId, externalId);
      if (options.mustExist && !current) throw new NotFound(`Request ${externalId}`);
      checkIfMatch(options.ifMatch, current && etagOf(current), 'request');
      const now = new Date().toISOString();
      const request: StoredRequest = {
        clientId,
        externalId,
        document: next(current),
        authorization: current?.authorization ?? initialAuthorization(),
        version: (current?.version ?? 0) + 1,
        createdAt: current?.createdAt ?? now,
        updatedAt: now,
      };
      if (current) await store.update(request);
      else await store.create(request);
      return { request, created: !current };
    },
    // Another writer won the race: with If-Match that is a stale write; otherwise read again and retry.
    {
      ...(options.ifMatch !== undefined ? { attempts: 1 } : UNGUARDED_WRITE_RETRIES),
      onExhausted: (_, retryAfterMs) =>
        options.ifMatch !== undefined ? changedByAnotherWrite('request') : changedConcurrently('request', retryAfterMs),
    },
  );
}

/** A replace without If-Match: one atomic write, so concurrent writers never conflict. */
async function putDocument(
  store: RequestStore,
  clientId: string,
  externalId: string,
  document: Record<string, unknown>,
  mustExist: boolean,
): Promise<Written> {
  const request = await store.putDocument(clientId, externalId, document, {
    mustExist,
    initialAuthorization: initialAuthorization(),
    now: new Date().toISOString(),
  });
  if (!request) throw new NotFound(`Request ${externalId}`);
  return { request, created: request.version === 1 };
}

/**
 * A whole document in place of the stored one: one version-checked put of its own without If-Match, a
 * read-modify-write under it.
 */
function writeDocument(
  store: RequestStore,
  clientId: string,
  externalId: string,
  body: RequestDocument,
  { ifMatch, mustExist }: { ifMatch: string | undefined; mustExist: boolean },
): Promise<Written> {
  const document = withoutExternalId(externalId, body);
  return ifMatch === undefined
    ? putDocument(store, clientId, externalId, document, mustExist)
    : readModifyWrite(store, clientId, externalId, () => document, { ifMatch, mustExist });
}

/** v1 PUT: create or replace. */
export function upsert(
  store: RequestStore,
  clientId: string,
  externalId: string,
  body: RequestDocument,
  ifMatch?: string,
): Promise<Written> {
  return writeDocument(store, clientId, externalId, body, { ifMatch, mustExist: false });
}

/** v1.1 POST: one conditional put, no read first; its refusal is the 409 (the request exists). */
export async function create(
  store: RequestStore,
  clientId: string,
  body: RequestDocument & { externalId: string },
): Promise<Written> {
  const { externalId } = body;
  const now = new Date().toISOString();
  const request: StoredRequest = {
    clientId,
    externalId,
    document: withoutExternalId(externalId, body),
    authorization: initialAuthorization(),
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await store.create(request);
  } catch (error) {
    if (error instanceof VersionConflict) throw new AlreadyExists(`Request ${externalId}`);
    throw error;
  }
  return { request, created: true };
}

/** v1.1 PUT: replace only. */
export function replace(
  store: RequestStore,
  clientId: string,
  externalId: string,
  body: RequestDocument,
  ifMatch?: string,
): Promise<Written> {
  return writeDocument(store, clientId, externalId, body, { ifMatch, mustExist: true });
}

/**
 * v1 PATCH: merge patch onto the stored document; the result must pass `validator` (the route's
 * schema, imported by its handler so that no other function bundles it).
 */
export function patch(
  store: RequestStore,
  clientId: string,
  externalId: string,
  mergePatch: Record<string, unknown>,
  validator: CompiledValidator,
  ifMatch?: string,
): Promise<Written> {
  return readModifyWrite(
    store,
    clientId,
    externalId,
    (current) => {
      const merged = applyMergePatch({ externalId, ...current!.document }, mergePatch) as RequestDocument;
      assertValid(validator, merged);
      return withoutExternalId(externalId, merged);
    },
    { ifMatch, mustExist: true },
  );
}
