import type { LocalStack } from './stack.ts';

/*
 * What the payer-API channel needs to show itself locally (docs/pas-payer.md, README "Through the payer's
 * API"): the local PAS payer in the payer directory (as `SANDBOX-PAS`, set again at every start since its
 * port changes), a payer signing key for the demo client, the demo organization registered with the payer
 * (a fixed client_id, so the stored connection works after a restart) and its connection, and DEMO-PAS-*
 * requests for members the payer decides by.
 */

const PAS_DEMO_PAYER_ID = 'SANDBOX-PAS';
/** The client_id the local payer issues the demo organization, the same at every start. */
const DEMO_PAYER_CLIENT_ID = 'demo-organization';
const PAS_DEMO_CONNECTION_ID = 'demo-pas';

/** Requests the local payer decides by member (local/pas-payer/decisions.ts): approved, and pended. */
const PAS_DEMO_MEMBERS = { 'DEMO-PAS-APPROVED': 'SBX-10001', 'DEMO-PAS-PENDED': 'SBX-10003' } as const;

/** The demo client's JWKS URL at this stack. */
const jwksUriOf = async (stack: Pick<LocalStack, 'baseUrl'>, clientId: string) => {
  const { jwksPathOf, keySetIdOf } = await import('#lib/payer-api/signing-keys/key-set-id');
  return `${stack.baseUrl}${jwksPathOf(keySetIdOf(clientId))}`;
};

/** The client's first payer signing key, unless it has one. */
const ensureSigningKey = async (clientId: string) => {
  const { dynamoPayerKeySetStore } = await import('#lib/payer-api/signing-keys/dynamo-key-set-store');
  if (await dynamoPayerKeySetStore.ofClient(clientId)) return;
  const { rotatePayerSigningKey } = await import('#lib/payer-api/signing-keys/rotation');
  const { keeperOf } = await import('#lib/payer-api/signing-keys/keepers');
  await rotatePayerSigningKey({ store: dynamoPayerKeySetStore, keeper: keeperOf('local'), clientId });
};

const seedPasRequests = async (clientId: string) => {
  const { requests } = await import('#lib/requests/service');
  const { sandboxDemoRequest } = await import('./seed.ts');
  const { SANDBOX_MEMBERS, SANDBOX_SERVICE_FROM_DATE } = await import('./sandbox-portal/seed.ts');
  for (const [externalId, memberId] of Object.entries(PAS_DEMO_MEMBERS)) {
    if (await requests.get(clientId, externalId).catch(() => undefined)) continue;
    const member = SANDBOX_MEMBERS.find((candidate) => candidate.memberId === memberId)!;
    const payer = { Payer: 'Sandbox Health Plan (PAS API)', PayerId: PAS_DEMO_PAYER_ID };
    // PAS wants the request category on every item (X12 UM01: HS, health services review).
    await requests.upsert(clientId, externalId, {
      requestTypeCode: 'HS',
      ...sandboxDemoRequest(member, payer, SANDBOX_SERVICE_FROM_DATE),
    });
  }
};

export const seedPayerApiDemo = async (
  stack: Pick<LocalStack, 'baseUrl' | 'pasPayer'>,
  demo: { clientId: string; clientUserId: string },
) => {
  const { payerEndpointDirectory } = await import('#lib/payer-endpoints/payer-endpoints');
  const { dynamoPayerEndpointStore } = await import('#lib/payer-endpoints/dynamo-payer-endpoint-store');
  await payerEndpointDirectory({ store: dynamoPayerEndpointStore, urlPolicy: () => 'local' }).set({
    payerId: PAS_DEMO_PAYER_ID,
    name: 'Sandbox Health Plan (PAS API)',
    fhirBaseUrl: stack.pasPayer.fhirBaseUrl,
    tokenUrl: stack.pasPayer.tokenUrl,
    // The demo answers requests for documents in a claim update; the local payer takes CDex too (docs/pas-payer.md).
    attachmentSubmission: 'claim-update',
    subscriptions: 'rest-hook',
  });
  await ensureSigningKey(demo.clientId);
  stack.pasPayer.registerClient({
    jwksUri: await jwksUriOf(stack, demo.clientId),
    name: 'Demo organization',
    clientId: DEMO_PAYER_CLIENT_ID,
  });
  const { payerConnections } = await import('#lib/payer-connections/service');
  const scope = { clientId: demo.clientId };
  if (!(await payerConnections.get(scope, PAS_DEMO_CONNECTION_ID).catch(() => undefined))) {
    await payerConnections.create(scope, {
      externalId: PAS_DEMO_CONNECTION_ID,
      clientUserId: demo.clientUserId,
      payerId: PAS_DEMO_PAYER_ID,
      clientId: DEMO_PAYER_CLIENT_ID,
    });
  }
  await seedPasRequests(demo.clientId);
};
