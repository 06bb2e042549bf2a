import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Scope } from '#lib/tenancy/scope';
import { unauthorized } from './problem.ts';

/*
 * The event a handler sees and who sent it, as the authorizer resolved it. Apart from the Middy stack
 * (endpoint.ts), so that the middlewares the stack takes in (idempotency.ts) can read the caller
 * without importing the stack.
 */

/** The event a handler sees: API Gateway's REST event with the body already parsed. */
export type ApiEvent<TBody = undefined> = Omit<APIGatewayProxyEvent, 'body'> & { body: TBody };

/** The tenant, as resolved by the authorizer. Never taken from the body or path. */
export const clientIdOf = (event: Pick<APIGatewayProxyEvent, 'requestContext'>): string => {
  const clientId = event.requestContext.authorizer?.clientId;
  if (typeof clientId !== 'string' || clientId === '') throw unauthorized();
  return clientId;
};

/**
 * What the caller may reach (#lib/tenancy/scope): its client and, for a key restricted to one, its
 * organization, both as resolved by the authorizer.
 */
export const scopeOf = (event: Pick<APIGatewayProxyEvent, 'requestContext'>): Scope => {
  const clientId = clientIdOf(event);
  const organizationId = event.requestContext.authorizer?.organizationId;
  return typeof organizationId === 'string' && organizationId !== '' ? { clientId, organizationId } : { clientId };
};

/** The id of the API key the authorizer accepted (not the key, nor its hash). */
export const apiKeyIdOf = (event: Pick<APIGatewayProxyEvent, 'requestContext'>): string => {
  const keyId = event.requestContext.authorizer?.keyId;
  if (typeof keyId !== 'string' || keyId === '') throw unauthorized();
  return keyId;
};
