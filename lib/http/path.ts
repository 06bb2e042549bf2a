import type { APIGatewayProxyEvent } from 'aws-lambda';
import { ID_MAX_LENGTH, ID_PATTERN } from '#lib/validation/schemas/common';
import { badRequest } from './problem.ts';

const idPattern = new RegExp(ID_PATTERN);

/** A client-chosen id from the path, checked before it is used in any key. */
export const pathId = (event: Pick<APIGatewayProxyEvent, 'pathParameters'>, name: string, label = name): string => {
  const value = event.pathParameters?.[name];
  if (!value || value.length > ID_MAX_LENGTH || !idPattern.test(value)) {
    throw badRequest(
      `${label} must be 1 to ${ID_MAX_LENGTH} characters: letters, digits and . _ : @ - (not starting with a symbol).`,
      { parameter: label },
    );
  }
  return value;
};

/** The request's id: the route's `{externalId}` segment, which the spec calls requestExternalId. */
export const requestExternalIdOf = (event: Pick<APIGatewayProxyEvent, 'pathParameters'>) =>
  pathId(event, 'externalId', 'requestExternalId');

/** Ids of ours, in any case (they are read lower-cased); the OpenAPI document states the same pattern. */
export const UUID_PATTERN = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';
const UUID = new RegExp(UUID_PATTERN);

/** An id of ours (a UUID) from the path: anything else cannot name one. */
export const uuidPathId = (event: Pick<APIGatewayProxyEvent, 'pathParameters'>, name: string) => {
  const value = event.pathParameters?.[name]?.toLowerCase();
  if (!value || !UUID.test(value)) throw badRequest(`${name} must be a UUID.`, { parameter: name });
  return value;
};

/** Attachment ids are ours (UUIDs), so anything else cannot name one. */
export const attachmentIdOf = (event: Pick<APIGatewayProxyEvent, 'pathParameters'>) =>
  uuidPathId(event, 'attachmentId');

export const header = (event: Pick<APIGatewayProxyEvent, 'headers'>, name: string): string | undefined =>
  event.headers?.[name.toLowerCase()] ?? undefined;
