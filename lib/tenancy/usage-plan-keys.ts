import {
  type APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlansCommand,
  UpdateUsagePlanCommand,
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

/** The name of a client's own usage plan: how the admin CLI finds it again. */
const clientUsagePlanName = (clientId: string) => `client-${clientId}`;

type Sender = Pick<APIGatewayClient, 'send'>;

/** Every page of a paginated API Gateway listing. */
const allPages = async <T>(page: (position: string | undefined) => Promise<{ items?: T[]; position?: string }>) => {
  const items: T[] = [];
  let position: string | undefined;
  do {
    const result = await page(position);
    items.push(...(result.items ?? []));
    position = result.position;
  } while (position);
  return items;
};

/**
 * The id of the client's API Gateway key: the key named after the client whose value is the one its
 * Client item holds (a name alone could be repeated by a second attach-usage-plan-key).
 */
const apiKeyIdOf = async (client: Sender, clientId: string, usageIdentifierKey: string) => {
  const keys = await allPages((position) =>
    client.send(new GetApiKeysCommand({ nameQuery: `client-${clientId}`, includeValues: true, limit: 500, position })),
  );
  const key = keys.find((candidate) => candidate.value === usageIdentifierKey);
  if (!key?.id) throw new Error(`Client ${clientId}'s usage plan key is not among API Gateway's API keys`);
  return key.id;
};

/** The client's own plan, if it has one, and the plans its key is in (one per stage). */
const plansOf = async (client: Sender, clientId: string, keyId: string) => {
  const [all, ofKey] = await Promise.all([
    allPages((position) => client.send(new GetUsagePlansCommand({ limit: 500, position }))),
    allPages((position) => client.send(new GetUsagePlansCommand({ keyId, limit: 500, position }))),
  ]);
  return {
    own: all.find((plan) => plan.name === clientUsagePlanName(clientId)),
    keyIn: new Set(ofKey.map((plan) => plan.id)),
  };
};

/**
 * Moves the key from one plan to another. A key may be in one plan per stage, so it leaves the old
 * plan first: for that instant it is in none (its client's requests are then refused with 403 once
 * usage keys are required). If it cannot join the new plan it goes back to the old one.
 */
const moveKey = async (client: Sender, keyId: string, from: string, to: string) => {
  await client.send(new DeleteUsagePlanKeyCommand({ usagePlanId: from, keyId }));
  try {
    await client.send(new CreateUsagePlanKeyCommand({ usagePlanId: to, keyId, keyType: 'API_KEY' }));
  } catch (error) {
    await client
      .send(new CreateUsagePlanKeyCommand({ usagePlanId: from, keyId, keyType: 'API_KEY' }))
      .catch(() => undefined);
    throw error;
  }
};

export interface ClientPlanLimits {
  rateLimit: number;
  burstLimit: number;
  quotaPerDay: number;
}

/**
 * Gives a client its own usage plan with `limits` (`set-client-limits` on AWS): created on the default
 * plan's API stages, or updated in place (which keeps the day's count), and the client's key moved
 * into it off the default plan. Returns the plan's id.
 */
export const applyClientUsagePlan = async (
  client: Sender,
  {
    clientId,
    usageIdentifierKey,
    defaultUsagePlanId,
    limits,
  }: { clientId: string; usageIdentifierKey: string; defaultUsagePlanId: string; limits: ClientPlanLimits },
): Promise<{ usagePlanId: string }> => {
  const keyId = await apiKeyIdOf(client, clientId, usageIdentifierKey);
  const { own, keyIn } = await plansOf(client, clientId, keyId);
  let usagePlanId = own?.id;
  if (usagePlanId) {
    await client.send(
      new UpdateUsagePlanCommand({
        usagePlanId,
        patchOperations: [
          { op: 'replace', path: '/throttle/rateLimit', value: String(limits.rateLimit) },
          { op: 'replace', path: '/throttle/burstLimit', value: String(limits.burstLimit) },
          { op: 'replace', path: '/quota/limit', value: String(limits.quotaPerDay) },
        ],
      }),
    );
  } else {
    const defaultPlan = await client.send(new GetUsagePlanCommand({ usagePlanId: defaultUsagePlanId }));
    const created = await client.send(
      new CreateUsagePlanCommand({
        name: clientUsagePlanName(clientId),
        description: 'Throttle and daily quota of one API client (set-client-limits)',
        apiStages: (defaultPlan.apiStages ?? []).map(({ apiId, stage }) => ({ apiId, stage })),
        throttle: { rateLimit: limits.rateLimit, burstLimit: limits.burstLimit },
        quota: { limit: limits.quotaPerDay, period: 'DAY' },
      }),
    );
    if (!created.id) throw new Error('API Gateway returned no usage plan id');
    usagePlanId = created.id;
  }
  if (!keyIn.has(usagePlanId)) {
    if (keyIn.has(defaultUsagePlanId)) await moveKey(client, keyId, defaultUsagePlanId, usagePlanId);
    else await client.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId, keyType: 'API_KEY' }));
  }
  return { usagePlanId };
};

/**
 * Deletes a client's own usage plan, if it has one (back on the default plan, or the client deleted):
 * API Gateway deletes no plan still attached to a stage, so its stages are removed first.
 */
export const deleteClientUsagePlan = async (client: Sender, { clientId }: { clientId: string }) => {
  const plans = await allPages((position) => client.send(new GetUsagePlansCommand({ limit: 500, position })));
  const own = plans.find((plan) => plan.name === clientUsagePlanName(clientId));
  if (!own?.id) return { deletedUsagePlanId: null };
  if (own.apiStages?.length) {
    await client.send(
      new UpdateUsagePlanCommand({
        usagePlanId: own.id,
        patchOperations: own.apiStages.map(({ apiId, stage }) => ({
          op: 'remove',
          path: '/apiStages',
          value: `${apiId}:${stage}`,
        })),
      }),
    );
  }
  await client.send(new DeleteUsagePlanCommand({ usagePlanId: own.id }));
  return { deletedUsagePlanId: own.id };
};

/**
 * Deletes a client's API Gateway keys (`delete-client`): every key named after it, the stored one and
 * any stray a repeated attach-usage-plan-key left, leaves the plans it is in and is deleted. A key
 * already gone is simply not found, so a repeated run sends no delete. Returns the deleted keys' ids.
 */
export const deleteClientApiKeys = async (client: Sender, { clientId }: { clientId: string }) => {
  const name = `client-${clientId}`;
  // nameQuery matches by prefix: client-c1 would find client-c10's key too.
  const keys = (
    await allPages((position) => client.send(new GetApiKeysCommand({ nameQuery: name, limit: 500, position })))
  ).filter((key) => key.name === name && key.id);
  for (const { id: keyId } of keys) {
    const plans = await allPages((position) => client.send(new GetUsagePlansCommand({ keyId, limit: 500, position })));
    for (const { id: usagePlanId } of plans) {
      await client.send(new DeleteUsagePlanKeyCommand({ usagePlanId, keyId }));
    }
    await client.send(new DeleteApiKeyCommand({ apiKey: keyId }));
  }
  return { deletedApiKeyIds: keys.map((key) => key.id!) };
};

/**
 * Puts a client back on the default plan (`set-client-limits --default` on AWS): its key moves there
 * and its own plan is deleted. Nothing to do for a client without one.
 */
export const returnToDefaultUsagePlan = async (
  client: Sender,
  {
    clientId,
    usageIdentifierKey,
    defaultUsagePlanId,
  }: { clientId: string; usageIdentifierKey: string; defaultUsagePlanId: string },
): Promise<{ usagePlanId: string; deletedUsagePlanId: string | null }> => {
  const keyId = await apiKeyIdOf(client, clientId, usageIdentifierKey);
  const { own, keyIn } = await plansOf(client, clientId, keyId);
  if (own?.id && keyIn.has(own.id)) await moveKey(client, keyId, own.id, defaultUsagePlanId);
  else if (!keyIn.has(defaultUsagePlanId)) {
    await client.send(new CreateUsagePlanKeyCommand({ usagePlanId: defaultUsagePlanId, keyId, keyType: 'API_KEY' }));
  }
  const { deletedUsagePlanId } = own?.id
    ? await deleteClientUsagePlan(client, { clientId })
    : { deletedUsagePlanId: null };
  return { usagePlanId: defaultUsagePlanId, deletedUsagePlanId };
};
