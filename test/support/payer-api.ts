import { expect, inject } from 'vitest';
import { OUR_SYSTEMS } from '#lib/payer-api/pas/codes';
import { dynamoPayerKeySetStore } from '#lib/payer-api/signing-keys/dynamo-key-set-store';
import { keeperOf } from '#lib/payer-api/signing-keys/keepers';
import { jwksPathOf, keySetIdOf } from '#lib/payer-api/signing-keys/key-set-id';
import { rotatePayerSigningKey } from '#lib/payer-api/signing-keys/rotation';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { payerEndpointDirectory } from '#lib/payer-endpoints/payer-endpoints';
import { baseUrl, call, newTenant, uniqueId } from './api.ts';
import { PAYER_CONNECTIONS } from './payer-connections.ts';

/*
 * The payer-API channel's test data (docs/payer-api.md, docs/pas-payer.md): a tenant wired to a local PAS
 * payer as local/pas-seed.ts wires the demo, but through the API where a client would act: a signing key
 * (the local keeper, in the stack's state directory), the payer in the directory, the organization
 * registered at the payer over HTTP with its JWKS URL, and a connection created through the API.
 */

/** A local PAS payer as the tests reach it over HTTP: the shared stack's, or one a test file started itself. */
export interface PayerSide {
  url: string;
  fhirBaseUrl: string;
  tokenUrl: string;
  operatorToken: string;
}

/** The PAS payer the shared test stack runs, from its environment (test/support/global-setup.ts). */
export const stackPayer = (): PayerSide => {
  const env = inject('stackEnv');
  return {
    url: env.PAS_PAYER_URL!,
    fhirBaseUrl: env.PAS_PAYER_FHIR_BASE_URL!,
    tokenUrl: env.PAS_PAYER_TOKEN_URL!,
    operatorToken: env.PAS_PAYER_OPERATOR_TOKEN!,
  };
};

/**
 * A PAS payer of the test file's own, in its process: what it counts per Bundle identifier (claims made,
 * submissions received) is readable only there. The stack's functions reach it over HTTP like any payer.
 */
export const ownPayer = async () => {
  const { startPasPayer } = await import('#local/pas-payer/server');
  const payer = await startPasPayer({ port: 0 });
  return {
    ...payer,
    /** Claims made, and $submit calls received, with this submission's Bundle identifier. */
    countsOf: (bundleIdentifier: string) => ({
      claims: payer.claimsWithIdentifier(bundleIdentifier, OUR_SYSTEMS.submission),
      submissions: payer.submissionsWithIdentifier(bundleIdentifier, OUR_SYSTEMS.submission),
    }),
  };
};

const directory = payerEndpointDirectory({ store: dynamoPayerEndpointStore, urlPolicy: () => 'local' });

/** The payer in the operator's directory (the admin CLI's `set-payer-endpoint`), pointing at `payer`. */
export const setPayerEndpoint = (
  payerId: string,
  payer: PayerSide,
  flags: {
    decisionTimeframes?: 'none' | 'cms-0057-f';
    attachmentSubmission?: 'claim-update' | 'cdex';
    subscriptions?: 'rest-hook' | 'none';
  } = {},
) =>
  directory.set({
    payerId,
    name: `${payerId} plan`,
    fhirBaseUrl: payer.fhirBaseUrl,
    tokenUrl: payer.tokenUrl,
    ...flags,
  });

const asOperator = (payer: PayerSide, path: string, body: unknown) =>
  fetch(`${payer.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${payer.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** The payer's operator registers an organization's JWKS URL (POST /register); its client_id. */
export const registerAtPayer = async (payer: PayerSide, jwksUri: string, answerShape?: 'bundle' | 'parameters') => {
  const res = await asOperator(payer, '/register', {
    jwks_uri: jwksUri,
    client_name: 'Payer API test organization',
    ...(answerShape ? { answer_shape: answerShape } : {}),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
};

export type PayerApiTenant = Awaited<ReturnType<typeof payerApiTenant>>;

/** A connection of the tenant's organization to `payerId`, through the API; its representation. */
export const createConnection = async (
  tenant: { apiKey: string; clientUserId: string },
  payerId: string,
  payerClientId: string,
  overrides: Record<string, unknown> = {},
) => {
  const res = await call('POST', PAYER_CONNECTIONS, {
    apiKey: tenant.apiKey,
    body: {
      externalId: uniqueId('pconn'),
      clientUserId: tenant.clientUserId,
      payerId,
      clientId: payerClientId,
      ...overrides,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
};

/**
 * A fresh tenant (client, organization, user) whose organization reaches `payerId` through `payer`'s API:
 * its first signing key, the organization registered at the payer with the JWKS URL the connection shows,
 * and an active connection. The payer's endpoint is the caller's to set (setPayerEndpoint), once per file.
 */
export async function payerApiTenant(
  label: string,
  { payer, payerId, answerShape }: { payer: PayerSide; payerId: string; answerShape?: 'bundle' | 'parameters' },
) {
  const tenant = await newTenant(label);
  await rotatePayerSigningKey({ store: dynamoPayerKeySetStore, keeper: keeperOf('local'), clientId: tenant.clientId });
  const jwksUri = `${baseUrl}${jwksPathOf(keySetIdOf(tenant.clientId))}`;
  const payerClientId = await registerAtPayer(payer, jwksUri, answerShape);
  const connection = await createConnection(tenant, payerId, payerClientId);
  expect(connection.jwksUri).toBe(jwksUri);
  return { ...tenant, payerId, payerClientId, connection };
}

/**
 * A request the local payer decides by its member id (docs/pas-payer.md, "Decisions, by member"): complete
 * for PAS, two procedures (two Claim items), a rendering provider with an NPI.
 */
export const pasRequestBody = (
  externalId: string,
  memberId: string,
  payerId: string,
  overrides: Record<string, unknown> = {},
) => ({
  externalId,
  requestTypeCode: 'HS',
  certificationTypeCode: 'I',
  serviceTypeCode: '2',
  placeOfServiceCode: '22',
  admissionTypeCode: '2',
  fromDate: '2026-03-02',
  toDate: '2026-03-06',
  patient: {
    firstName: 'Avery',
    lastName: 'Payerapi',
    birthDate: '1975-04-12',
    genderCode: 'U',
    memberId,
    Payer: `${payerId} plan`,
    PayerId: payerId,
  },
  requestingProvider: { roleCode: '1P', npi: '1234567893', firstName: 'Jane', lastName: 'Doe' },
  renderingProviders: [{ roleCode: 'SJ', npi: '1245319599', firstName: 'Sam', lastName: 'Rivera' }],
  diagnoses: [{ qualifierCode: 'ABK', code: 'M54.5' }],
  procedures: [
    { qualifierCode: 'HC', code: '72148', quantity: 1 },
    { qualifierCode: 'HC', code: '72149', quantity: 2 },
  ],
  ...overrides,
});

/** Stores a request for `memberId` at the tenant's payer (or `overrides.patient`'s); its externalId. */
export const createPasRequest = async (
  tenant: Pick<PayerApiTenant, 'apiKey' | 'payerId'>,
  memberId: string,
  overrides: Record<string, unknown> = {},
) => {
  const externalId = uniqueId('PAS');
  const res = await call('POST', '/api/external/v1.1/Requests', {
    apiKey: tenant.apiKey,
    body: pasRequestBody(externalId, memberId, tenant.payerId, overrides),
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

export const submitPath = (externalId: string) =>
  `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}/submit`;

/** POST …/Requests/{externalId}/submit for the tenant's client user, unless the body says otherwise. */
export const submit = (
  tenant: { apiKey: string; clientUserId: string },
  externalId: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) =>
  call('POST', submitPath(externalId), {
    apiKey: tenant.apiKey,
    body: { clientUserId: tenant.clientUserId, ...body },
    headers,
  });

/** A test file's own local PAS payer (ownPayer). */
export type OwnPayer = Awaited<ReturnType<typeof ownPayer>>;

/**
 * What a payer-API test file starts with: its own local PAS payer, the payer in the directory (with `flags`),
 * and a tenant connected to it. `inProcess`: the file runs functions in this process (payer tasks, the token
 * function), so their invocation contexts and table grants are set up first, before any AWS SDK request.
 */
export async function ownPayerAndTenant(
  label: string,
  payerId: string,
  { flags, inProcess = false }: { flags?: Parameters<typeof setPayerEndpoint>[2]; inProcess?: boolean } = {},
) {
  if (inProcess) {
    await (await import('#local/invocations')).enableInvocationContexts();
    (await import('#local/table-grants')).enforceTableGrants();
  }
  const payer = await ownPayer();
  await setPayerEndpoint(payerId, payer, flags);
  const tenant = await payerApiTenant(label, { payer, payerId });
  return { payer, tenant };
}

/** The payer's operator page (HTML), read with the operator's token. */
const operatorPage = async (payer: PayerSide) => {
  const res = await fetch(`${payer.url}/operator`, { headers: { authorization: `Bearer ${payer.operatorToken}` } });
  expect(res.status).toBe(200);
  return res.text();
};

/** The payer's claims as its operator sees them: id, status and Claim identifiers of each. */
export const payerClaims = async (payer: PayerSide) => {
  const rows = (await operatorPage(payer)).matchAll(
    /<tr data-claim-id="([^"]+)" data-member-id="[^"]*" data-status="([a-z_]+)">\n<td>[^<]*<\/td><td class="identifier">([^<]*)<\/td>/g,
  );
  return [...rows].map(([, claimId, status, identifiers]) => ({
    claimId: claimId!,
    status: status!,
    identifiers: identifiers!.split(', '),
  }));
};

/** The payer's claims made from Bundles with this identifier (the Claim's identifier is the Bundle's). */
export const claimsOf = async (payer: PayerSide, bundleIdentifier: string) =>
  (await payerClaims(payer)).filter((claim) => claim.identifiers.includes(bundleIdentifier));

/** The payer's operator decides a pended claim (POST /operator/decisions, JSON). */
export const decideAtPayer = async (
  payer: PayerSide,
  decision: { claimId: string; status: 'approved' | 'partially_approved' | 'denied'; number?: string },
) => {
  const res = await asOperator(payer, '/operator/decisions', decision);
  expect(res.status).toBe(200);
  return (await res.json()) as { claimId: string; status: string; preAuthRef: string | null };
};

/** A webhook subscription of the tenant to authorization changes, delivered to `url`; `unsubscribe` deletes it. */
export const subscribeToChanges = async (tenant: { apiKey: string }, url: string) => {
  const res = await call('POST', '/api/external/v1.1/Webhooks', {
    apiKey: tenant.apiKey,
    body: { url, events: ['authorization.status_changed'] },
  });
  expect(res.status, res.text).toBe(201);
  const { id, secret } = res.body as { id: string; secret: string };
  const unsubscribe = async () => {
    const deleted = await call('DELETE', `/api/external/v1.1/Webhooks/${id}`, { apiKey: tenant.apiKey });
    expect(deleted.status).toBe(204);
  };
  return { secret, unsubscribe };
};

/** The request's authorization history (GET …/authorization/history), newest first. */
export const historyOf = async (tenant: { apiKey: string }, externalId: string) => {
  const res = await call('GET', `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}/authorization/history`, {
    apiKey: tenant.apiKey,
  });
  expect(res.status, res.text).toBe(200);
  return res.body.items as Array<Record<string, any>>;
};
