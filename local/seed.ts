import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { provisioning } from '#lib/tenancy/provisioning';

export const DEMO_CLIENT_ID = 'demo-client';
export const DEMO_ORGANIZATION_ID = 'demo-organization';

/**
 * Seeds the demo client, organization and client user, idempotently. A generated demo key is
 * remembered under .local/ (local state only) so restarts print a key that still works.
 */
export const seedDemo = async (stateDir: string, env: NodeJS.ProcessEnv = process.env) => {
  const admin = provisioning(dynamoTenantStore);
  const clientUserId = env.DEMO_CLIENT_USER_ID || 'demo-user';
  const remembered = join(stateDir, 'demo-api-key');
  const apiKey = env.DEMO_API_KEY || (existsSync(remembered) ? readFileSync(remembered, 'utf8').trim() : undefined);

  if (!(await dynamoTenantStore.getClient(DEMO_CLIENT_ID))) {
    await dynamoTenantStore.putClient({
      clientId: DEMO_CLIENT_ID,
      name: 'Demo client',
      createdAt: new Date().toISOString(),
    });
  }
  const { hashApiKey } = await import('#lib/tenancy/api-keys');
  const known = apiKey ? await dynamoTenantStore.findApiKey(hashApiKey(apiKey)) : undefined;
  const usable = known && !known.revokedAt && known.clientId === DEMO_CLIENT_ID;
  const demoKey = usable ? apiKey! : (await admin.createApiKey(DEMO_CLIENT_ID, known ? undefined : apiKey)).apiKey;
  if (!env.DEMO_API_KEY) writeFileSync(remembered, demoKey, { mode: 0o600 });

  if (!(await dynamoTenantStore.getOrganization(DEMO_CLIENT_ID, DEMO_ORGANIZATION_ID))) {
    await admin.createOrganization(DEMO_CLIENT_ID, 'Demo organization', DEMO_ORGANIZATION_ID);
  }
  await admin.createClientUser(DEMO_CLIENT_ID, DEMO_ORGANIZATION_ID, clientUserId);
  return { clientId: DEMO_CLIENT_ID, organizationId: DEMO_ORGANIZATION_ID, clientUserId, apiKey: demoKey };
};
