import {
  type APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
} from '@aws-sdk/client-api-gateway';

/**
 * On AWS: an API Gateway API key for one client, attached to a usage plan, whose value the
 * authorizer returns as usageIdentifierKey so that the plan throttles and meters that client
 * (docs/security.md, "Throttling and quotas"). Never a credential clients present: the RestApi takes
 * its keys from the authorizer only. A key that could not be attached is deleted again.
 */
export const createUsagePlanKey = async (
  client: Pick<APIGatewayClient, 'send'>,
  { clientId, usagePlanId }: { clientId: string; usagePlanId: string },
): Promise<{ apiGatewayKeyId: string; usageIdentifierKey: string }> => {
  const created = await client.send(
    new CreateApiKeyCommand({
      name: `client-${clientId}`,
      description: 'Usage plan key of one API client (returned by the authorizer; not given to the client)',
      enabled: true,
    }),
  );
  if (!created.id || !created.value) throw new Error('API Gateway returned no API key id or value');
  try {
    await client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: created.id, keyType: 'API_KEY' }));
  } catch (error) {
    await client.send(new DeleteApiKeyCommand({ apiKey: created.id })).catch(() => undefined);
    throw error;
  }
  return { apiGatewayKeyId: created.id, usageIdentifierKey: created.value };
};
