import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '#lib/config/environment';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { provisioning } from '#lib/tenancy/provisioning';
import { localEnvironment } from './config.ts';
import type { SandboxMember } from './sandbox-portal/seed.ts';

export const DEMO_CLIENT_ID = 'demo-client';
const DEMO_ORGANIZATION_ID = 'demo-organization';

/**
 * Seeds the demo client, organization and client user, idempotently. A generated demo key is
 * remembered under .local/ (local state only) so restarts print a key that still works.
 */
export const seedDemo = async (stateDir: string, env: Env = localEnvironment()) => {
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
  await seedAutomationDemo(DEMO_CLIENT_ID, clientUserId);
  return { clientId: DEMO_CLIENT_ID, organizationId: DEMO_ORGANIZATION_ID, clientUserId, apiKey: demoKey };
};

/**
 * A demo request for one of the sandbox's members (docs/sandbox-portal.md), of `payer`: what both channels'
 * demos send, each adding what it needs.
 */
export const sandboxDemoRequest = (
  member: SandboxMember,
  payer: { Payer: string; PayerId: string },
  serviceDate: string,
): Record<string, unknown> => ({
  admissionTypeCode: '3',
  serviceTypeCode: '1',
  placeOfServiceCode: '11',
  fromDate: serviceDate,
  toDate: serviceDate,
  patient: {
    firstName: member.firstName,
    lastName: member.lastName,
    birthDate: member.birthDate,
    memberId: member.memberId,
    ...payer,
  },
  requestingProvider: { roleCode: '1P', npi: '1234567893', lastName: 'Doe', firstName: 'Jane' },
  diagnoses: [{ qualifierCode: 'ABK', code: 'M54.5' }],
  procedures: [{ qualifierCode: 'HC', code: '72148', quantity: 1 }],
});

/**
 * What the automation needs to show itself: the sandbox portal's users as the demo organization's
 * portal accounts (one without, one with TOTP; docs/sandbox-portal.md) and the DEMO-* requests for the
 * members the portal knows. Created through the services (secrets sealed as for any client), once.
 */
const seedAutomationDemo = async (clientId: string, clientUserId: string) => {
  const { portalAccountsWithSecrets: portalAccounts } = await import('#lib/portal-accounts/service-with-secrets');
  const { requests } = await import('#lib/requests/service');
  const { SANDBOX_DEMO_MEMBERS, SANDBOX_MEMBERS, SANDBOX_PAYER_ID, SANDBOX_SERVICE_FROM_DATE, SANDBOX_USERS } =
    await import('./sandbox-portal/seed.ts');
  const [plain, withTotp] = SANDBOX_USERS;
  const accounts = [
    { externalId: 'demo-sandbox', user: plain, payerIds: [SANDBOX_PAYER_ID] },
    // The same payer is served by the first account; this one shows a TOTP login when given the payer alone.
    { externalId: 'demo-sandbox-totp', user: withTotp, payerIds: ['SANDBOX-TOTP'] },
  ];
  for (const { externalId, user, payerIds } of accounts) {
    if (await portalAccounts.get({ clientId }, externalId).catch(() => undefined)) continue;
    await portalAccounts.create(
      { clientId },
      {
        externalId,
        clientUserId,
        portalId: 'sandbox',
        payerIds,
        username: user.username,
        password: user.password,
        ...(user.totpSecret ? { totpSecret: user.totpSecret } : {}),
      },
    );
  }
  for (const [externalId, memberId] of Object.entries(SANDBOX_DEMO_MEMBERS)) {
    if (await requests.get(clientId, externalId).catch(() => undefined)) continue;
    const member = SANDBOX_MEMBERS.find((candidate) => candidate.memberId === memberId)!;
    const payer = { Payer: 'Sandbox Health Plan', PayerId: SANDBOX_PAYER_ID };
    await requests.upsert(clientId, externalId, {
      ...sandboxDemoRequest(member, payer, SANDBOX_SERVICE_FROM_DATE),
      renderingProviders: [{ roleCode: 'SJ', organizationName: 'Example Imaging' }],
    });
  }
};
