import {
  changedByAnotherWrite,
  changedConcurrently,
  checkIfMatch,
  retryOnConflict,
  VersionConflict,
} from '#lib/concurrency';
import type { Authorization, StoredRequest } from '#lib/entities/request';
import { AlreadyExists, Invalid, NotFound } from '#lib/errors';
import { assertValid, type CompiledValidator } from '#lib/validation/validator';
import { applyMergePatch } from './merge-patch.ts';
import type { RequestStore } from './request-store.ts';

/**
 * Request use cases, independent of HTTP and storage. Semantics (DESIGN.md): v1 PUT upserts,
 * v1 PATCH merge-patches an existing request and validates the result, v1.1 POST creates (409 if
 * it exists), v1.1 PUT replaces an existing one (404 if missing). If-Match guards every write.
 */
export type RequestDocument = Record<string, unknown> & { externalId?: string };

const initialAuthorization = (): Authorization => ({
  status: 'not_submitted',
  number: null,
  decisionDate: null,
  lastCheckedAt: null,
});

/** The representation clients read: their document plus what the service adds. */
export const representationOf = (request: StoredRequest) => ({
  externalId: request.externalId,
  ...request.document,
  authorization: request.authorization,
  createdAt: request.createdAt,
  updatedAt: request.updatedAt,
  version: request.version,
});

export const etagOf = (request: Pick<StoredRequest, 'version'>) => `"${request.version}"`;

/** The body's externalId, when present, must name the same request as the path. */
const withoutExternalId = (externalId: string, body: RequestDocument): Record<string, unknown> => {
  const { externalId: inBody, ...document } = body;
  if (inBody !== undefined && inBody !== externalId) {
    throw new Invalid(
      `externalId in the body ("${String(inBody).slice(0, 64)}") does not match the path ("${externalId}").`,
    );
  }
  return document;
};

/**
 * How long a read-modify-write without If-Match (merge patches) keeps retrying while concurrent writers
 * win before it gives up with 409: enough for dozens of simultaneous patches of one request to land
 * one after another, with pauses that spread the writers out (growing with attempts, capped), and
 * within a budget far under the 29 s an API function may run. docs/data-model.md, "Concurrent writes".
 */
const UNGUARDED_WRITE_RETRIES = { attempts: 20, backoffMs: 50, maxBackoffMs: 1_000, budgetMs: 10_000 } as const;

export const requestService = (store: RequestStore) => {
  const write = (
    clientId: string,
    externalId: string,
    next: (current: StoredRequest | undefined) => Record<string, unknown>,
    options: { ifMatch?: string; mustExist?: boolean },
  ): Promise<{ request: StoredRequest; created: boolean }> =>
    retryOnConflict(
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
        onExhausted: () =>
          options.ifMatch !== undefined ? changedByAnotherWrite('request') : changedConcurrently('request'),
      },
    );

  /** A replace without If-Match: one atomic write, so concurrent writers never conflict. */
  const putDocument = async (
    clientId: string,
    externalId: string,
    document: Record<string, unknown>,
    mustExist: boolean,
  ) => {
    const request = await store.putDocument(clientId, externalId, document, {
      mustExist,
      initialAuthorization: initialAuthorization(),
      now: new Date().toISOString(),
    });
    if (!request) throw new NotFound(`Request ${externalId}`);
    return { request, created: request.version === 1 };
  };

  return {
    get: async (clientId: string, externalId: string) => {
      const request = await store.get(clientId, externalId);
      if (!request) throw new NotFound(`Request ${externalId}`);
      return request;
    },

    /** v1 PUT: create or replace. */
    upsert: (clientId: string, externalId: string, body: RequestDocument, ifMatch?: string) =>
      ifMatch === undefined
        ? putDocument(clientId, externalId, withoutExternalId(externalId, body), false)
        : write(clientId, externalId, () => withoutExternalId(externalId, body), { ifMatch }),

    /** v1.1 POST: one conditional put, no read first; its refusal is the 409 (the request exists). */
    create: async (clientId: string, body: RequestDocument & { externalId: string }) => {
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
    },

    /** v1.1 PUT. */
    replace: (clientId: string, externalId: string, body: RequestDocument, ifMatch?: string) =>
      ifMatch === undefined
        ? putDocument(clientId, externalId, withoutExternalId(externalId, body), true)
        : write(clientId, externalId, () => withoutExternalId(externalId, body), { ifMatch, mustExist: true }),

    /**
     * v1 PATCH: merge patch onto the stored document; the result must pass `validator` (the
     * route's schema, imported by its handler so that no other function bundles it).
     */
    patch: (
      clientId: string,
      externalId: string,
      patch: Record<string, unknown>,
      validator: CompiledValidator,
      ifMatch?: string,
    ) =>
      write(
        clientId,
        externalId,
        (current) => {
          const merged = applyMergePatch({ externalId, ...current!.document }, patch) as RequestDocument;
          assertValid(validator, merged);
          return withoutExternalId(externalId, merged);
        },
        { ifMatch, mustExist: true },
      ),
  };
};
