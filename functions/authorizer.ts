import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { observed } from '#lib/observability/invocation';
import { apiKeys } from '#lib/tenancy/service';

/**
 * Lambda REQUEST authorizer: x-api-key → clientId in the request context (and keyId, for the access
 * log; and organizationId for a key restricted to one organization, which handlers turn into their
 * scope: lib/http/api-event.ts, scopeOf). Unknown, revoked and expired keys alike are a 401: throwing 'Unauthorized' is API Gateway's
 * contract for one. The policy covers the whole API so that a cached result serves every route;
 * tenancy is enforced by the keys handlers derive from clientId. When the client has an API Gateway
 * API key (usageIdentifierKey on its Client item), it is returned so that the usage plan throttles
 * and meters the client (docs/security.md, "Throttling and quotas").
 */
export const handler = observed(
  'Authorizer',
  async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const header = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'x-api-key')?.[1];
    const key = await apiKeys.authenticate(header);
    if (!key) throw new Error('Unauthorized');
    const [arnPrefix, stage] = event.methodArn.split('/');
    const usageIdentifierKey = await apiKeys.usageIdentifierKeyOf(key.clientId);
    return {
      principalId: key.clientId,
      ...(usageIdentifierKey ? { usageIdentifierKey } : {}),
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `${arnPrefix}/${stage}/*/*` }],
      },
      context: {
        clientId: key.clientId,
        keyId: key.keyId,
        ...(key.organizationId ? { organizationId: key.organizationId } : {}),
      },
    };
  },
);
