import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { clientAssertion, jwksServer, pasRequestBundle } from './pas-payer-support.ts';

/**
 * The local stack runs the PAS payer beside the sandbox portal, and says where in its environment (what
 * `npm start` writes to .local/stack.json): the payer the test stack started answers there.
 */
const env = inject('stackEnv');
let keys: Awaited<ReturnType<typeof jwksServer>>;

beforeAll(async () => {
  keys = await jwksServer();
});
afterAll(() => keys?.close());

describe('the local stack’s PAS payer', () => {
  it('publishes its URLs and operator token, and serves a registered client end to end', async () => {
    const { PAS_PAYER_URL, PAS_PAYER_FHIR_BASE_URL, PAS_PAYER_TOKEN_URL, PAS_PAYER_OPERATOR_TOKEN } = env;
    expect(PAS_PAYER_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect([PAS_PAYER_FHIR_BASE_URL, PAS_PAYER_TOKEN_URL]).toEqual([
      `${PAS_PAYER_URL}/fhir`,
      `${PAS_PAYER_URL}/auth/token`,
    ]);
    const discovery = await fetch(`${PAS_PAYER_FHIR_BASE_URL}/.well-known/smart-configuration`);
    expect(await discovery.json()).toMatchObject({ token_endpoint: PAS_PAYER_TOKEN_URL });

    const registered = await fetch(`${PAS_PAYER_URL}/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PAS_PAYER_OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jwks_uri: keys.jwksUri, client_name: 'Stack test organization' }),
    });
    expect(registered.status).toBe(201);
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const assertion = await clientAssertion({
      clientId,
      audience: PAS_PAYER_TOKEN_URL!,
      privateKey: keys.privateKey,
      kid: keys.kid,
    });
    const token = await fetch(PAS_PAYER_TOKEN_URL!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
      }).toString(),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const submitted = await fetch(`${PAS_PAYER_FHIR_BASE_URL}/Claim/$submit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/fhir+json' },
      body: JSON.stringify(pasRequestBundle({ memberId: 'SBX-10001' })),
    });
    expect(submitted.status).toBe(200);
    const answer = (await submitted.json()) as { entry: { resource: Record<string, unknown> }[] };
    expect(answer.entry[0]!.resource).toMatchObject({ resourceType: 'ClaimResponse', outcome: 'complete' });
  });
});
