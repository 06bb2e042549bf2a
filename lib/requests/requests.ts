import { NotFound } from '#lib/errors';
import type { CompiledValidator } from '#lib/validation/validator';
import type { RequestDocument } from './request-document.ts';
import type { RequestStore } from './request-store.ts';
import { create, patch, replace, upsert } from './request-writes.ts';

async function get(store: RequestStore, clientId: string, externalId: string) {
  const request = await store.get(clientId, externalId);
  if (!request) throw new NotFound(`Request ${externalId}`);
  return request;
}

/**
 * Request use cases, independent of HTTP and storage: reading here, writing in request-writes.ts,
 * the document and its representation in request-document.ts.
 */
export const requestService = (store: RequestStore) => ({
  get: (clientId: string, externalId: string) => get(store, clientId, externalId),
  upsert: (clientId: string, externalId: string, body: RequestDocument, ifMatch?: string) =>
    upsert(store, clientId, externalId, body, ifMatch),
  create: (clientId: string, body: RequestDocument & { externalId: string }) => create(store, clientId, body),
  replace: (clientId: string, externalId: string, body: RequestDocument, ifMatch?: string) =>
    replace(store, clientId, externalId, body, ifMatch),
  patch: (
    clientId: string,
    externalId: string,
    mergePatch: Record<string, unknown>,
    validator: CompiledValidator,
    ifMatch?: string,
  ) => patch(store, clientId, externalId, mergePatch, validator, ifMatch),
});
