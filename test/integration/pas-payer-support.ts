import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bundle, BundleEntry, ClaimItem, Resource } from '@medplum/fhirtypes';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

/*
 * What the local PAS payer's tests need: PAS Bundles written by hand after the IG's examples (HL7 Da Vinci
 * PAS, Examples.fsh: the Homecare and Referral authorization bundles, CC0), a client's key pair served as
 * a JWKS from a tiny HTTP server, and client assertions signed with jose.
 */

const REQUESTOR_NPI = '1234567893';
export const RENDERING_NPI = '1245319599';
const X12 = 'https://codesystem.x12.org/005010/';
const PAS = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/';
const CPT = 'http://www.ama-assn.org/go/cpt';

export interface BundleOptions {
  memberId: string;
  /** The Bundle's identifier value (the submitter's transaction id): unique per test. */
  identifier?: string;
  /** The Claim's identifier value (the patient event trace number). */
  claimIdentifier?: string;
  /** CPT codes, one item each, with their quantities. */
  items?: { code: string; quantity?: number }[];
}

const entry = (resource: Resource & { id: string }): BundleEntry => ({
  fullUrl: `urn:uuid:${resource.id}`,
  resource,
});

/** The patient, coverage, payer and providers both kinds of Bundle carry. */
function parties(memberId: string) {
  const ids = { patient: randomUUID(), coverage: randomUUID(), insurer: randomUUID(), requestor: randomUUID() };
  const rendering = randomUUID();
  const resources = [
    {
      resourceType: 'Patient' as const,
      id: ids.patient,
      identifier: [
        {
          type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MB' }] },
          system: 'http://sandbox.example.org/member-id',
          value: memberId,
        },
      ],
      name: [{ family: 'Sandbox', given: ['Avery'] }],
      gender: 'female' as const,
      birthDate: '1975-04-12',
    },
    {
      resourceType: 'Coverage' as const,
      id: ids.coverage,
      status: 'active' as const,
      subscriberId: memberId,
      beneficiary: { reference: `urn:uuid:${ids.patient}` },
      relationship: {
        coding: [
          { system: 'http://terminology.hl7.org/CodeSystem/subscriber-relationship', code: 'self' },
          { system: `${X12}1069`, code: '18' },
        ],
      },
      payor: [{ reference: `urn:uuid:${ids.insurer}` }],
    },
    {
      resourceType: 'Organization' as const,
      id: ids.insurer,
      active: true,
      type: [{ coding: [{ system: `${X12}98`, code: 'PR' }] }],
      name: 'Sandbox Health Plan',
    },
    {
      resourceType: 'Organization' as const,
      id: ids.requestor,
      active: true,
      type: [{ coding: [{ system: `${X12}98`, code: 'X3' }] }],
      identifier: [{ system: 'http://hl7.org/fhir/sid/us-npi', value: REQUESTOR_NPI }],
      name: 'Example Imaging Group',
      address: [{ line: ['111 1st Street'], city: 'San Diego', state: 'CA', postalCode: '92101', country: 'US' }],
    },
    {
      resourceType: 'Practitioner' as const,
      id: rendering,
      identifier: [{ system: 'http://hl7.org/fhir/sid/us-npi', value: RENDERING_NPI }],
      name: [{ family: 'Doe', given: ['Jane'] }],
    },
  ];
  return { ids, rendering, entries: resources.map(entry) };
}

const itemOf = (code: string, quantity: number, sequence: number): ClaimItem => ({
  extension: [
    {
      url: `${PAS}extension-serviceItemRequestType`,
      valueCodeableConcept: { coding: [{ system: `${X12}1525`, code: 'HS' }] },
    },
    {
      url: `${PAS}extension-certificationType`,
      valueCodeableConcept: { coding: [{ system: `${X12}1322`, code: 'I' }] },
    },
  ],
  sequence,
  careTeamSequence: [1],
  diagnosisSequence: [1],
  category: { coding: [{ system: `${X12}1365`, code: '4', display: 'Diagnostic Imaging' }] },
  productOrService: { coding: [{ system: CPT, code }] },
  servicedPeriod: { start: '2026-03-02', end: '2026-03-02' },
  locationCodeableConcept: {
    coding: [
      { system: 'https://www.cms.gov/Medicare/Coding/place-of-service-codes/Place_of_Service_Code_Set', code: '11' },
    ],
  },
  quantity: { value: quantity, unit: 'visit' },
});

/** A PAS Request Bundle: the Claim first, then the resources it references. */
export function pasRequestBundle(options: BundleOptions): Bundle {
  const { ids, rendering, entries } = parties(options.memberId);
  const claimId = randomUUID();
  const items = options.items ?? [{ code: '72148', quantity: 1 }];
  return {
    resourceType: 'Bundle',
    identifier: { system: 'urn:example:submitter-transaction', value: options.identifier ?? randomUUID() },
    type: 'collection',
    timestamp: new Date().toISOString(),
    entry: [
      entry({
        resourceType: 'Claim',
        id: claimId,
        extension: [
          {
            url: `${PAS}extension-levelOfServiceCode`,
            valueCodeableConcept: { coding: [{ system: `${X12}1338`, code: 'E' }] },
          },
        ],
        identifier: [
          { system: 'urn:trnorg:9012345678', value: options.claimIdentifier ?? `TRN-${claimId.slice(0, 8)}` },
        ],
        status: 'active',
        type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/claim-type', code: 'professional' }] },
        use: 'preauthorization',
        patient: { reference: `urn:uuid:${ids.patient}` },
        created: new Date().toISOString(),
        insurer: { reference: `urn:uuid:${ids.insurer}` },
        provider: { reference: `urn:uuid:${ids.requestor}` },
        priority: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/processpriority', code: 'normal' }] },
        careTeam: [
          {
            extension: [{ url: `${PAS}extension-careTeamClaimScope`, valueBoolean: true }],
            sequence: 1,
            provider: { reference: `urn:uuid:${rendering}` },
          },
        ],
        diagnosis: [
          {
            sequence: 1,
            diagnosisCodeableConcept: { coding: [{ system: 'http://hl7.org/fhir/sid/icd-10-cm', code: 'M54.50' }] },
          },
        ],
        insurance: [{ sequence: 1, focal: true, coverage: { reference: `urn:uuid:${ids.coverage}` } }],
        item: items.map(({ code, quantity }, index) => itemOf(code, quantity ?? 1, index + 1)),
      }),
      ...entries,
    ],
  };
}

export interface InquiryOptions {
  memberId: string;
  /** The submitted Claim's identifier value, when the inquiry names it. */
  claimIdentifier?: string;
  npi?: string;
}

/** A PAS Inquiry Bundle (PASClaimInquiryBundleExample's shape): member id and provider NPI, maybe the claim's identifier. */
export function pasInquiryBundle(options: InquiryOptions): Bundle {
  const { ids, entries } = parties(options.memberId);
  const requestor = entries.find((candidate) => candidate.resource?.id === ids.requestor)!.resource as {
    identifier: { value: string }[];
  };
  requestor.identifier[0]!.value = options.npi ?? REQUESTOR_NPI;
  return {
    resourceType: 'Bundle',
    identifier: { system: 'urn:example:submitter-transaction', value: randomUUID() },
    type: 'collection',
    timestamp: new Date().toISOString(),
    entry: [
      entry({
        resourceType: 'Claim',
        id: randomUUID(),
        ...(options.claimIdentifier
          ? { identifier: [{ system: 'urn:trnorg:9012345678', value: options.claimIdentifier }] }
          : {}),
        status: 'active',
        type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/claim-type', code: 'professional' }] },
        use: 'preauthorization',
        patient: { reference: `urn:uuid:${ids.patient}` },
        created: new Date().toISOString(),
        insurer: { reference: `urn:uuid:${ids.insurer}` },
        provider: { reference: `urn:uuid:${ids.requestor}` },
        priority: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/processpriority', code: 'normal' }] },
        insurance: [{ sequence: 1, focal: true, coverage: { reference: `urn:uuid:${ids.coverage}` } }],
      }),
      ...entries,
    ],
  };
}

/** A client's RS384 key pair, its public half served as a JWKS over HTTP (loopback), counting fetches. */
export async function jwksServer() {
  const { privateKey, publicKey } = await generateKeyPair('RS384');
  const kid = randomUUID();
  const published: JWK[] = [{ ...(await exportJWK(publicKey)), kid, alg: 'RS384', use: 'sig' }];
  let fetches = 0;
  const server: Server = createServer((_req, res) => {
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    jwksUri: `http://127.0.0.1:${port}/jwks.json`,
    privateKey,
    kid,
    fetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface AssertionOptions {
  clientId: string;
  audience: string;
  privateKey: CryptoKey;
  kid?: string | undefined;
  issuer?: string;
  subject?: string;
  expiresInSeconds?: number;
  jti?: string;
}

/** A client assertion as SMART Backend Services has it, each claim overridable to test a refusal. */
export const clientAssertion = (options: AssertionOptions) => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS384', typ: 'JWT', ...(options.kid === undefined ? {} : { kid: options.kid }) })
    .setIssuer(options.issuer ?? options.clientId)
    .setSubject(options.subject ?? options.clientId)
    .setAudience(options.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresInSeconds ?? 240))
    .setJti(options.jti ?? randomUUID())
    .sign(options.privateKey);
};

/** A live access token from the payer's token endpoint, for `clientId` signing with `keys` (scope: the payer's default). */
export const accessTokenAt = async (
  payer: { tokenUrl: string },
  keys: { privateKey: CryptoKey; kid: string },
  clientId: string,
  scope?: string,
) => {
  const assertion = await clientAssertion({
    clientId,
    audience: payer.tokenUrl,
    privateKey: keys.privateKey,
    kid: keys.kid,
  });
  const response = await fetch(payer.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
      ...(scope ? { scope } : {}),
    }).toString(),
  });
  if (response.status !== 200) throw new Error(`The payer's token endpoint answered ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
};
