import type { Authorization, StoredRequest } from '#lib/entities/request';
import { Invalid } from '#lib/errors';

/** A client's request document as it arrives: the path names the request, the body may repeat it. */
export type RequestDocument = Record<string, unknown> & { externalId?: string };

export const initialAuthorization = (): Authorization => ({
  status: 'not_submitted',
  number: null,
  decisionDate: null,
  lastCheckedAt: null,
});

/**
 * The authorization as clients read it: every member present, whichever channel (if any) read it, so a
 * client's code needs no branch for a request the payer-API channel has not seen.
 */
export const authorizationView = (authorization: Authorization) => ({
  status: authorization.status,
  number: authorization.number,
  decisionDate: authorization.decisionDate,
  lastCheckedAt: authorization.lastCheckedAt,
  channel: authorization.channel ?? null,
  items: authorization.items ?? [],
  reasons: authorization.reasons ?? [],
  decisionDueAt: authorization.decisionDueAt ?? null,
  informationRequested: authorization.informationRequested ?? null,
});

/** The representation clients read: their document plus what the service adds. */
export const representationOf = (request: StoredRequest) => ({
  externalId: request.externalId,
  ...request.document,
  authorization: authorizationView(request.authorization),
  createdAt: request.createdAt,
  updatedAt: request.updatedAt,
  version: request.version,
});

export const etagOf = (request: Pick<StoredRequest, 'version'>) => `"${request.version}"`;

/** The body's externalId, when present, must name the same request as the path. */
export const withoutExternalId = (externalId: string, body: RequestDocument): Record<string, unknown> => {
  const { externalId: inBody, ...document } = body;
  if (inBody !== undefined && inBody !== externalId) {
    throw new Invalid(
      `externalId in the body ("${String(inBody).slice(0, 64)}") does not match the path ("${externalId}").`,
    );
  }
  return document;
};
