import { randomUUID } from 'node:crypto';
import type {
  Bundle,
  Claim,
  ClaimResponse,
  Extension,
  Parameters as FhirParameters,
  OperationOutcome,
} from '@medplum/fhirtypes';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPasAnswer } from '#lib/payer-api/pas/answer-reader';
import { r4Errors } from '#local/pas-payer/fhir-validation';
import { PAS_PARTIAL_MEMBER_ID, PAS_RATE_LIMITED_MEMBER_ID, PAS_UNAVAILABLE_MEMBER_ID } from '#local/pas-payer/seed';
import { type PasPayer, startPasPayer } from '#local/pas-payer/server';
import { SANDBOX_HANG_MEMBER_ID } from '#local/sandbox-portal/seed';
import { notificationReceiver, pasSubscription, statusOf } from './pas-payer-subscriptions-support.ts';
import { clientAssertion, jwksServer, pasInquiryBundle, pasRequestBundle, RENDERING_NPI } from './pas-payer-support.ts';

/** The local PAS payer over real HTTP: tokens from signed assertions, $submit, $inquire, the operator. */
const APPROVED = 'SBX-10001';
const DENIED = 'SBX-10002';
const PENDED = 'SBX-10003';
const REVIEW_ACTION = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-reviewAction';
const REVIEW_ACTION_CODE = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-reviewActionCode';

let payer: PasPayer;
let keys: Awaited<ReturnType<typeof jwksServer>>;
/** Registered over HTTP, answers as bare Bundles. */
let bundleClient: string;
/** Registered in process, answers as Parameters. */
let parametersClient: string;

beforeAll(async () => {
  keys = await jwksServer();
  payer = await startPasPayer();
  const registered = await fetch(`${payer.url}/register`, {
    method: 'POST',
    headers: { authorization: `Bearer ${payer.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jwks_uri: keys.jwksUri, client_name: 'Test organization' }),
  });
  expect(registered.status).toBe(201);
  bundleClient = ((await registered.json()) as { client_id: string }).client_id;
  parametersClient = payer.registerClient({
    jwksUri: keys.jwksUri,
    name: 'Parameters client',
    answerShape: 'parameters',
  });
});
afterAll(async () => {
  await payer?.close();
  await keys?.close();
});

const tokenRequest = (fields: Record<string, string>, contentType = 'application/x-www-form-urlencoded') =>
  fetch(payer.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: new URLSearchParams(fields).toString(),
  });

const assertionFields = (assertion: string) => ({
  grant_type: 'client_credentials',
  client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
  client_assertion: assertion,
  scope: 'system/Claim.write',
});

const assertionFor = (clientId: string, overrides: Partial<Parameters<typeof clientAssertion>[0]> = {}) =>
  clientAssertion({ clientId, audience: payer.tokenUrl, privateKey: keys.privateKey, kid: keys.kid, ...overrides });

const accessToken = async (clientId = bundleClient) => {
  const response = await tokenRequest(assertionFields(await assertionFor(clientId)));
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
};

const fhir = async (operation: '$submit' | '$inquire', body: unknown, token: string, base = payer.fhirBaseUrl) => {
  const response = await fetch(`${base}/Claim/${operation}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
};

const claimResponseOf = (bundle: unknown) => {
  const answer = bundle as Bundle;
  expect(answer.resourceType).toBe('Bundle');
  expect(answer.type).toBe('collection');
  return answer.entry![0]!.resource as ClaimResponse;
};

/** Each item's X12 306 code, number and reason codes, from its reviewAction extension. */
const reviewsOf = (claimResponse: ClaimResponse) =>
  (claimResponse.item ?? []).map((item) => {
    const action = item.adjudication?.[0]?.extension?.find((extension) => extension.url === REVIEW_ACTION);
    const part = (url: string): Extension[] => action?.extension?.filter((extension) => extension.url === url) ?? [];
    return {
      sequence: item.itemSequence,
      code: part(REVIEW_ACTION_CODE)[0]?.valueCodeableConcept?.coding?.[0]?.code,
      number: part('number')[0]?.valueString,
      reasons: part('reasonCode').map((reason) => reason.valueCodeableConcept?.coding?.[0]?.code),
    };
  });

/** The status our client reads in an answer (lib/payer-api/pas/): the two sides agree on PAS. */
const statusRead = (answer: unknown) => {
  const read = readPasAnswer(answer);
  return read.kind === 'decision' ? read.decision.status : read.kind;
};

const operatorDecision = (claimId: string, status: string, extra: Record<string, string> = {}) =>
  fetch(`${payer.url}/operator/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${payer.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ claimId, status, ...extra }),
  });

describe('local PAS payer: client registration and tokens', () => {
  it('registers a client only for the operator, with a JWKS URL that is https or on loopback', async () => {
    const register = (body: unknown, token = payer.operatorToken) =>
      fetch(`${payer.url}/register`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const denied = await register({ jwks_uri: keys.jwksUri, client_name: 'x' }, 'not-the-token');
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toContain('Bearer');
    const plainHttp = await register({ jwks_uri: 'http://payer-client.example.com/jwks', client_name: 'x' });
    expect(plainHttp.status).toBe(400);
    expect(await plainHttp.json()).toMatchObject({ error: 'invalid_client_metadata' });
    expect((await register({ jwks_uri: keys.jwksUri, client_name: '' })).status).toBe(400);
    expect((await register({ jwks_uri: keys.jwksUri, client_name: 'x', answer_shape: 'xml' })).status).toBe(400);
    const created = await register({ jwks_uri: 'https://keys.example.com/jwks', client_name: 'Elsewhere' });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      client_id: expect.stringMatching(/^sbx-pas-[0-9a-f]{24}$/),
      answer_shape: 'bundle',
    });
  });

  it('issues a short-lived bearer token for an assertion verified against the client’s JWKS, fetched over HTTP', async () => {
    const fetchesBefore = keys.fetches();
    const response = await tokenRequest(assertionFields(await assertionFor(bundleClient)));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({
      access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      token_type: 'bearer',
      expires_in: 300,
      scope: 'system/Claim.write',
    });
    // Fetched at the first assertion of this payer's life (or kept since): never fewer than one fetch in all.
    expect(keys.fetches()).toBeGreaterThanOrEqual(Math.max(1, fetchesBefore));
  });

  it('refuses each bad assertion with 401 invalid_client, and says nothing more', async () => {
    const otherKey = (await generateKeyPair('RS384')).privateKey;
    const replayed = await assertionFor(bundleClient);
    expect((await tokenRequest(assertionFields(replayed))).status).toBe(200);
    const cases: Record<string, Promise<string> | string> = {
      'wrong audience': assertionFor(bundleClient, { audience: `${payer.url}/token` }),
      'iss is not sub': assertionFor(bundleClient, { subject: parametersClient }),
      'exp more than 5 minutes ahead': assertionFor(bundleClient, { expiresInSeconds: 360 }),
      expired: assertionFor(bundleClient, { expiresInSeconds: -30 }),
      'replayed jti': replayed,
      'unknown kid': assertionFor(bundleClient, { kid: 'not-a-published-kid' }),
      'no kid': assertionFor(bundleClient, { kid: undefined }),
      'unknown client': assertionFor('sbx-pas-unknown'),
      'signed by another key': assertionFor(bundleClient, { privateKey: otherKey }),
      'not a JWT': 'not.a.jwt',
    };
    for (const [name, assertion] of Object.entries(cases)) {
      const response = await tokenRequest(assertionFields(await assertion));
      expect({ name, status: response.status, body: await response.json() }).toEqual({
        name,
        status: 401,
        body: { error: 'invalid_client' },
      });
    }
  });

  it('refuses a malformed token request with 400 (invalid_request, unsupported_grant_type)', async () => {
    const assertion = await assertionFor(bundleClient);
    const asJson = await tokenRequest(assertionFields(assertion), 'application/json');
    expect([asJson.status, await asJson.json()]).toEqual([400, { error: 'invalid_request' }]);
    const noAssertion = await tokenRequest({ grant_type: 'client_credentials' });
    expect([noAssertion.status, await noAssertion.json()]).toEqual([400, { error: 'invalid_request' }]);
    const password = await tokenRequest({ ...assertionFields(assertion), grant_type: 'password' });
    expect([password.status, await password.json()]).toEqual([400, { error: 'unsupported_grant_type' }]);
  });

  it('answers 401 with WWW-Authenticate without a token, with an unknown one and with an expired one', async () => {
    const bundle = pasRequestBundle({ memberId: APPROVED });
    const none = await fetch(`${payer.fhirBaseUrl}/Claim/$submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/fhir+json' },
      body: JSON.stringify(bundle),
    });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="pas-payer"');
    const unknown = await fhir('$submit', bundle, 'made-up-token');
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer realm="pas-payer", error="invalid_token"');
    expect(unknown.body).toMatchObject({ resourceType: 'OperationOutcome' });

    const shortLived = await startPasPayer({ tokenTtlSeconds: 1 });
    try {
      const clientId = shortLived.registerClient({ jwksUri: keys.jwksUri, name: 'Short-lived tokens' });
      const assertion = await clientAssertion({
        clientId,
        audience: shortLived.tokenUrl,
        privateKey: keys.privateKey,
        kid: keys.kid,
      });
      const issued = await fetch(shortLived.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(assertionFields(assertion)).toString(),
      });
      const { access_token, expires_in } = (await issued.json()) as { access_token: string; expires_in: number };
      expect(expires_in).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const expired = await fhir('$submit', bundle, access_token, shortLived.fhirBaseUrl);
      expect(expired.status).toBe(401);
      expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    } finally {
      await shortLived.close();
    }
  });
});

describe('local PAS payer: $submit', () => {
  it('decides by member: approved, denied, pended, partial — as PAS Response Bundles', async () => {
    const token = await accessToken();
    const submitted = async (memberId: string, items?: { code: string; quantity?: number }[]) => {
      const request = pasRequestBundle({ memberId, ...(items ? { items } : {}) });
      const answer = await fhir('$submit', request, token);
      expect(answer.status).toBe(200);
      expect((answer.body as Bundle).identifier).toEqual(request.identifier);
      return { request, claimResponse: claimResponseOf(answer.body), bundle: answer.body as Bundle };
    };

    const approved = await submitted(APPROVED);
    expect(approved.claimResponse).toMatchObject({
      resourceType: 'ClaimResponse',
      status: 'active',
      use: 'preauthorization',
      outcome: 'complete',
      preAuthRef: expect.stringMatching(/^SBXPA-\d{6}$/),
      created: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(reviewsOf(approved.claimResponse)).toEqual([
      { sequence: 1, code: 'A1', number: `${approved.claimResponse.preAuthRef}-1`, reasons: [] },
    ]);
    // ClaimResponse.request and .patient resolve inside the answer.
    const fullUrls = approved.bundle.entry!.map((entry) => entry.fullUrl);
    expect(fullUrls).toContain(approved.claimResponse.request!.reference);
    expect(fullUrls).toContain(approved.claimResponse.patient.reference);

    const denied = await submitted(DENIED);
    expect(denied.claimResponse.preAuthRef).toBeUndefined();
    expect(reviewsOf(denied.claimResponse)).toEqual([
      { sequence: 1, code: 'A3', number: undefined, reasons: ['SBX-MN'] },
    ]);

    const pended = await submitted(PENDED);
    expect(pended.claimResponse.outcome).toBe('complete');
    expect(reviewsOf(pended.claimResponse)).toEqual([
      { sequence: 1, code: 'A4', number: undefined, reasons: ['SBX-MR'] },
    ]);

    const partial = await submitted(PAS_PARTIAL_MEMBER_ID, [
      { code: '72148' },
      { code: '72149' },
      { code: '97110', quantity: 6 },
    ]);
    expect(reviewsOf(partial.claimResponse).map(({ code, reasons }) => [code, reasons])).toEqual([
      ['A1', []],
      ['A3', ['SBX-MN']],
      ['A3', ['SBX-MN']],
    ]);
    // One item: certified in part, for half the quantity asked (an addItem naming the item, as PAS has it).
    // Every answer is valid R4, as the payer checks what it is sent, and reads as our client reads it.
    for (const answer of [approved, denied, pended, partial])
      expect(await r4Errors(answer.bundle, 1 << 20)).toEqual([]);
    expect([approved, denied, pended, partial].map(({ bundle }) => statusRead(bundle))).toEqual([
      'approved',
      'denied',
      'pending',
      'partially_approved',
    ]);
    const partOfOne = await submitted(PAS_PARTIAL_MEMBER_ID, [{ code: '97110', quantity: 6 }]);
    expect(reviewsOf(partOfOne.claimResponse)[0]?.code).toBe('A2');
    expect(partOfOne.claimResponse.addItem).toMatchObject([
      { itemSequence: [1], productOrService: { coding: [{ code: '97110' }] }, quantity: { value: 3, unit: 'visit' } },
    ]);
    expect(await r4Errors(partOfOne.bundle, 1 << 20)).toEqual([]);
  });

  it('refuses an invalid Bundle with 400 and an OperationOutcome whose issues name the elements (FHIRPath)', async () => {
    const token = await accessToken();
    const bundle = pasRequestBundle({ memberId: APPROVED }) as unknown as { type: string; entry: { resource: any }[] };
    bundle.type = 'transaction';
    const claim = bundle.entry[0]!.resource;
    claim.use = 'claim';
    delete claim.item[0]!.productOrService;
    claim.insurer = { reference: 'Organization/not-in-the-bundle' };
    claim.unknownElement = true;
    bundle.entry[1]!.resource.birthDate = '12/04/1975';
    const refused = await fhir('$submit', bundle, token);
    expect(refused.status).toBe(400);
    const outcome = refused.body as OperationOutcome;
    expect(outcome.resourceType).toBe('OperationOutcome');
    const expressions = outcome.issue.flatMap((issue) => issue.expression ?? []);
    expect(expressions).toEqual(
      expect.arrayContaining([
        'Bundle.type',
        'Bundle.entry[0].resource.use',
        'Bundle.entry[0].resource.insurer',
        'Bundle.entry[0].resource.item[0].productOrService',
        'Bundle.entry[0].resource.unknownElement',
        'Bundle.entry[1].resource.birthDate',
      ]),
    );
    expect(outcome.issue.every((issue) => issue.severity === 'error')).toBe(true);

    const noItems = pasRequestBundle({ memberId: APPROVED });
    delete (noItems.entry![0]!.resource as { item?: unknown }).item;
    expect(
      ((await fhir('$submit', noItems, token)).body as OperationOutcome).issue.flatMap((i) => i.expression),
    ).toContain('Bundle.entry[0].resource.item');
    const notABundle = await fhir('$submit', { resourceType: 'Patient' }, token);
    expect(notABundle.status).toBe(400);
    const malformed = await fetch(`${payer.fhirBaseUrl}/Claim/$submit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+json' },
      body: '{"resourceType": "Bundle",',
    });
    expect([malformed.status, ((await malformed.json()) as OperationOutcome).resourceType]).toEqual([
      400,
      'OperationOutcome',
    ]);
    const asXml = await fetch(`${payer.fhirBaseUrl}/Claim/$submit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+xml' },
      body: '<Bundle/>',
    });
    expect(asXml.status).toBe(415);
  });

  it('makes one claim of a Bundle submitted twice (same identifier): the same ClaimResponse both times', async () => {
    const token = await accessToken();
    const request = pasRequestBundle({ memberId: APPROVED });
    const first = claimResponseOf((await fhir('$submit', request, token)).body);
    const again = claimResponseOf(
      (await fhir('$submit', { ...request, timestamp: new Date().toISOString() }, token)).body,
    );
    expect(again.id).toBe(first.id);
    expect(again.preAuthRef).toBe(first.preAuthRef);
    const { system, value } = request.identifier!;
    expect(payer.claimsWithIdentifier(value!, system)).toBe(1);
    expect(payer.submissionsWithIdentifier(value!, system)).toBe(2);
  });

  it('answers an unknown member with an error outcome (X12 75) and its path, and keeps no claim', async () => {
    const token = await accessToken();
    const request = pasRequestBundle({ memberId: 'SBX-00000' });
    const answer = await fhir('$submit', request, token);
    expect(answer.status).toBe(200);
    const claimResponse = claimResponseOf(answer.body);
    expect(claimResponse.outcome).toBe('error');
    expect(await r4Errors(answer.body as Bundle, 1 << 20)).toEqual([]);
    expect(claimResponse.error?.[0]?.code.coding?.[0]).toMatchObject({ code: '75' });
    expect(readPasAnswer(answer.body)).toMatchObject({ kind: 'refused', issues: [{ code: '75' }] });
    const coverageIndex = request.entry!.findIndex((entry) => entry.resource?.resourceType === 'Coverage');
    expect(claimResponse.error?.[0]?.extension?.[0]?.valueString).toBe(
      `Bundle.entry[${coverageIndex}].resource.subscriberId`,
    );
    expect(payer.claimsWithIdentifier(request.identifier!.value!, request.identifier!.system)).toBe(0);
  });

  it('answers 429 with Retry-After, or 503, once for its fault members, and the retry makes one claim', async () => {
    const token = await accessToken();
    for (const [memberId, status] of [
      [PAS_RATE_LIMITED_MEMBER_ID, 429],
      [PAS_UNAVAILABLE_MEMBER_ID, 503],
    ] as const) {
      const request = pasRequestBundle({ memberId });
      const fault = await fhir('$submit', request, token);
      expect(fault.status).toBe(status);
      expect(fault.headers.get('retry-after')).toBe(status === 429 ? '1' : null);
      expect((fault.body as OperationOutcome).resourceType).toBe('OperationOutcome');
      const retried = await fhir('$submit', request, token);
      expect(retried.status).toBe(200);
      expect(reviewsOf(claimResponseOf(retried.body))[0]?.code).toBe('A1');
      const { system, value } = request.identifier!;
      expect([payer.claimsWithIdentifier(value!, system), payer.submissionsWithIdentifier(value!, system)]).toEqual([
        1, 2,
      ]);
    }
  });

  it('never answers for the hang member (the client’s timeout)', async () => {
    const token = await accessToken();
    const started = Date.now();
    const hung = fetch(`${payer.fhirBaseUrl}/Claim/$submit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+json' },
      body: JSON.stringify(pasRequestBundle({ memberId: SANDBOX_HANG_MEMBER_ID })),
      signal: AbortSignal.timeout(2000),
    });
    await expect(hung).rejects.toThrow(/aborted|timeout/i);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });
});

describe('local PAS payer: $inquire and the operator', () => {
  it('reads a pended claim, then the operator’s decision (JSON), by member id, NPI and claim identifier', async () => {
    const token = await accessToken();
    const claimIdentifier = `TRN-${randomUUID()}`;
    const submitted = claimResponseOf(
      (await fhir('$submit', pasRequestBundle({ memberId: PENDED, claimIdentifier }), token)).body,
    );
    const inquiry = pasInquiryBundle({ memberId: PENDED, claimIdentifier });
    const before = await fhir('$inquire', inquiry, token);
    expect(before.status).toBe(200);
    expect((before.body as Bundle).identifier).toEqual(inquiry.identifier);
    expect(reviewsOf(claimResponseOf(before.body))[0]?.code).toBe('A4');

    const decided = await operatorDecision(submitted.id!, 'approved', { number: 'AUTH-2026-0001' });
    expect(decided.status).toBe(200);
    expect(await decided.json()).toEqual({ claimId: submitted.id, status: 'approved', preAuthRef: 'AUTH-2026-0001' });
    expect((await operatorDecision(submitted.id!, 'denied')).status).toBe(409);
    expect((await operatorDecision(randomUUID(), 'denied')).status).toBe(404);

    const after = claimResponseOf((await fhir('$inquire', inquiry, token)).body);
    expect(after.id).toBe(submitted.id);
    expect(after.preAuthRef).toBe('AUTH-2026-0001');
    expect(reviewsOf(after)).toEqual([{ sequence: 1, code: 'A1', number: 'AUTH-2026-0001-1', reasons: [] }]);
    // The rendering provider's NPI finds it too; another provider's, or another claim identifier, does not.
    const byRendering = await fhir(
      '$inquire',
      pasInquiryBundle({ memberId: PENDED, claimIdentifier, npi: RENDERING_NPI }),
      token,
    );
    expect(claimResponseOf(byRendering.body).id).toBe(submitted.id);
    for (const miss of [
      pasInquiryBundle({ memberId: PENDED, claimIdentifier, npi: '1999999984' }),
      pasInquiryBundle({ memberId: PENDED, claimIdentifier: 'TRN-never-submitted' }),
      pasInquiryBundle({ memberId: APPROVED, claimIdentifier }),
    ]) {
      const answer = (await fhir('$inquire', miss, token)).body as Bundle;
      expect([answer.resourceType, answer.type, answer.entry]).toEqual(['Bundle', 'collection', undefined]);
      expect(readPasAnswer(answer)).toEqual({ kind: 'not_found' });
    }
  });

  it('answers a Parameters client with Parameters{return}, for $submit and $inquire, none when nothing matches', async () => {
    const token = await accessToken(parametersClient);
    const claimIdentifier = `TRN-${randomUUID()}`;
    const submitted = (await fhir('$submit', pasRequestBundle({ memberId: APPROVED, claimIdentifier }), token))
      .body as FhirParameters;
    expect(submitted.resourceType).toBe('Parameters');
    expect(submitted.parameter?.map((parameter) => parameter.name)).toEqual(['return']);
    const claimResponse = claimResponseOf(submitted.parameter![0]!.resource);
    const found = (await fhir('$inquire', pasInquiryBundle({ memberId: APPROVED, claimIdentifier }), token))
      .body as FhirParameters;
    expect(found.parameter).toHaveLength(1);
    expect(claimResponseOf(found.parameter![0]!.resource).id).toBe(claimResponse.id);
    const none = (await fhir('$inquire', pasInquiryBundle({ memberId: APPROVED, claimIdentifier: 'TRN-none' }), token))
      .body;
    expect(none).toEqual({ resourceType: 'Parameters' });
    expect(readPasAnswer(none)).toEqual({ kind: 'not_found' });
    expect(statusRead(submitted)).toBe('approved');
  });

  it('refuses an inquiry without the member id or the provider’s NPI', async () => {
    const token = await accessToken();
    const inquiry = pasInquiryBundle({ memberId: APPROVED });
    for (const entry of inquiry.entry!) {
      if (entry.resource?.resourceType === 'Organization' && 'address' in entry.resource)
        delete entry.resource.identifier;
      if (entry.resource?.resourceType === 'Coverage') delete entry.resource.subscriberId;
      if (entry.resource?.resourceType === 'Patient') delete entry.resource.identifier;
    }
    const refused = await fhir('$inquire', inquiry, token);
    expect(refused.status).toBe(400);
    const expressions = (refused.body as OperationOutcome).issue.flatMap((issue) => issue.expression ?? []);
    expect(expressions).toEqual(expect.arrayContaining(['Bundle.entry[0].resource.provider']));
    expect(expressions.some((expression) => expression.endsWith('.subscriberId'))).toBe(true);
  });

  it('lets a browser operator decide on the page (cookie, csrf), and $inquire reads the denial', async () => {
    const token = await accessToken();
    const claimIdentifier = `TRN-${randomUUID()}`;
    const submitted = claimResponseOf(
      (await fhir('$submit', pasRequestBundle({ memberId: PENDED, claimIdentifier }), token)).body,
    );

    const link = await fetch(payer.operatorUrl, { redirect: 'manual' });
    expect(link.status).toBe(303);
    const cookie = link.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^pas_operator=[^;]+; Path=\/operator; HttpOnly; SameSite=Strict$/);
    expect((await fetch(`${payer.url}/operator`)).status).toBe(401);
    const page = await fetch(`${payer.url}/operator`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain(`data-claim-id="${submitted.id}"`);
    expect(html).toContain(claimIdentifier);
    expect(html).not.toContain('Avery'); // no patient names
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;

    const post = (fields: Record<string, string>) =>
      fetch(`${payer.url}/operator/decisions`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookie.split(';')[0]!, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
    expect((await post({ claimId: submitted.id!, status: 'denied', reasonCode: 'SBX-NC' })).status).toBe(403);
    const decided = await post({ csrf, claimId: submitted.id!, status: 'denied', reasonCode: 'SBX-NC' });
    expect([decided.status, decided.headers.get('location')]).toEqual([303, '/operator']);

    const after = claimResponseOf(
      (await fhir('$inquire', pasInquiryBundle({ memberId: PENDED, claimIdentifier }), token)).body,
    );
    expect(reviewsOf(after)).toEqual([{ sequence: 1, code: 'A3', number: undefined, reasons: ['SBX-NC'] }]);
  });

  it('escapes what a client sent when the page shows it', async () => {
    const token = await accessToken();
    const claimIdentifier = '<script>alert(1)</script>';
    await fhir('$submit', pasRequestBundle({ memberId: PENDED, claimIdentifier }), token);
    const page = await fetch(`${payer.url}/operator`, { headers: { authorization: `Bearer ${payer.operatorToken}` } });
    const html = await page.text();
    expect(html).not.toContain(claimIdentifier);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});

/**
 * A PAS Claim update of `original` (PAS "Updating Authorization Requests"): a new Bundle and Claim
 * identifier, Claim.related naming the original Claim, which the Bundle carries; `change` edits the Claim.
 */
const updateOf = (original: Bundle, change: (claim: Claim) => Claim = (claim) => claim): Bundle => {
  const [first, ...rest] = original.entry!;
  const claim = first!.resource as Claim;
  const id = randomUUID();
  const update: Claim = {
    ...claim,
    id,
    identifier: [{ system: 'urn:trnorg:9012345678', value: `TRN-${id.slice(0, 8)}` }],
    related: [
      {
        claim: { reference: first!.fullUrl!, identifier: claim.identifier![0]! },
        relationship: {
          coding: [{ system: 'http://terminology.hl7.org/CodeSystem/ex-relatedclaimrelationship', code: 'prior' }],
        },
      },
    ],
  };
  return {
    ...original,
    identifier: { ...original.identifier, value: randomUUID() },
    entry: [{ fullUrl: `urn:uuid:${id}`, resource: change(update) }, ...rest, first!],
  };
};

const INFO_CANCELLED = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/modifierextension-infoCancelled';
const CERTIFICATION_TYPE = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-certificationType';
const cancelType = {
  url: CERTIFICATION_TYPE,
  valueCodeableConcept: { coding: [{ system: `https://codesystem.x12.org/005010/1322`, code: '3' }] },
};

describe('local PAS payer: Claim updates and cancels', () => {
  it('applies an update to the one claim it holds: its items decided again, a cancelled item C', async () => {
    const token = await accessToken();
    const original = pasRequestBundle({ memberId: PENDED, items: [{ code: '72148' }, { code: '72149' }] });
    expect((await fhir('$submit', original, token)).status).toBe(200);
    const update = updateOf(original, (claim) => ({
      ...claim,
      item: claim.item!.map((item) =>
        item.sequence === 2 ? { ...item, modifierExtension: [{ url: INFO_CANCELLED, valueBoolean: true }] } : item,
      ),
    }));
    const answer = await fhir('$submit', update, token);
    expect(answer.status).toBe(200);
    const claimResponse = claimResponseOf(answer.body);
    expect(claimResponse.identifier).toEqual((update.entry![0]!.resource as Claim).identifier);
    expect(reviewsOf(claimResponse).map(({ sequence, code }) => [sequence, code])).toEqual([
      [1, 'A4'],
      [2, 'C'],
    ]);
    expect(statusRead(answer.body)).toBe('pending');
    expect(payer.claimsWithIdentifier(original.identifier!.value!, original.identifier!.system)).toBe(1);
    expect(payer.claimsWithIdentifier(update.identifier!.value!, update.identifier!.system)).toBe(0);
    // The update's identifier finds the claim, which now holds the update's Claim.
    const held = payer.heldClaim((update.entry![0]!.resource as Claim).identifier![0]!.value!);
    expect(held).toBe(payer.heldClaim((original.entry![0]!.resource as Claim).identifier![0]!.value!));
    expect(held!.claim).toEqual(update.entry![0]!.resource);
  });

  it('cancels the claim on certification type 3 on the Claim: every item C, the status cancelled', async () => {
    const token = await accessToken();
    const original = pasRequestBundle({ memberId: PENDED, items: [{ code: '72148' }, { code: '72149' }] });
    expect((await fhir('$submit', original, token)).status).toBe(200);
    const cancel = updateOf(original, (claim) => ({ ...claim, extension: [...claim.extension!, cancelType] }));
    const answer = await fhir('$submit', cancel, token);
    expect(answer.status).toBe(200);
    expect(reviewsOf(claimResponseOf(answer.body)).map(({ code }) => code)).toEqual(['C', 'C']);
    expect(statusRead(answer.body)).toBe('cancelled');
    // Nothing more to update once cancelled.
    const again = await fhir('$submit', updateOf(cancel), token);
    expect(statusRead(again.body)).toBe('refused');
  });

  it('rejects an update of a denied claim or of a claim it does not know (X12 33 on Claim.related), changing nothing', async () => {
    const token = await accessToken();
    const denied = pasRequestBundle({ memberId: DENIED });
    expect((await fhir('$submit', denied, token)).status).toBe(200);
    const answer = await fhir('$submit', updateOf(denied), token);
    expect(answer.status).toBe(200);
    const claimResponse = claimResponseOf(answer.body);
    expect(claimResponse.outcome).toBe('error');
    expect(claimResponse.error?.[0]?.code.coding?.[0]?.code).toBe('33');
    expect(statusRead(answer.body)).toBe('refused');
    expect(payer.heldClaim((denied.entry![0]!.resource as Claim).identifier![0]!.value!)!.verdict).toBe('denied');

    const unknown = updateOf(pasRequestBundle({ memberId: PENDED }));
    expect(statusRead((await fhir('$submit', unknown, token)).body)).toBe('refused');
  });

  it('notifies the client’s subscription of a cancel it applied, with the claim’s answer as it is now', async () => {
    const receiver = await notificationReceiver();
    try {
      const token = await accessToken();
      const created = await fetch(`${payer.fhirBaseUrl}/Subscription`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+json' },
        body: JSON.stringify(pasSubscription({ endpoint: receiver.url('/updates'), orgIdentifier: bundleClient })),
      });
      expect(created.status).toBe(201);
      await receiver.waitFor('/updates', 1, 'handshake');
      const original = pasRequestBundle({ memberId: PENDED });
      expect((await fhir('$submit', original, token)).status).toBe(200);
      const cancel = updateOf(original, (claim) => ({ ...claim, extension: [...claim.extension!, cancelType] }));
      expect(statusRead((await fhir('$submit', cancel, token)).body)).toBe('cancelled');
      const [event] = await receiver.waitFor('/updates', 1, 'event-notification');
      expect(statusOf(event!.body).events).toHaveLength(1);
      expect(statusRead(event!.body.entry![1]!.resource)).toBe('cancelled');
    } finally {
      await receiver.close();
    }
  });

  it('refuses (400) an update whose replaced Claim is not in the Bundle (PAS spec-65)', async () => {
    const token = await accessToken();
    const original = pasRequestBundle({ memberId: PENDED });
    const update = updateOf(original);
    const answer = await fhir('$submit', { ...update, entry: update.entry!.slice(0, -1) }, token);
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain('Bundle.entry[0].resource.related[0].claim');
  });
});
