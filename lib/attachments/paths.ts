import type { APIGatewayProxyEvent } from 'aws-lambda';
import { pathId } from '#lib/http/path';
import { badRequest } from '#lib/http/problem';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type PathEvent = Pick<APIGatewayProxyEvent, 'pathParameters'>;

/** The request's id: the route's `{externalId}` segment, which the spec calls requestExternalId. */
export const requestExternalIdOf = (event: PathEvent) => pathId(event, 'externalId', 'requestExternalId');

/** Attachment ids are ours (UUIDs), so anything else cannot name one. */
export const attachmentIdOf = (event: PathEvent) => {
  const value = event.pathParameters?.attachmentId?.toLowerCase();
  if (!value || !UUID.test(value)) throw badRequest('attachmentId must be a UUID.', { parameter: 'attachmentId' });
  return value;
};
