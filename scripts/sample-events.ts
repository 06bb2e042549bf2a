import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { functionLogicalId } from '#infra/constructs/service-function';
import { eventFunctions } from '#lib/routes/event-functions';
import { functionNameOf, type HandlerId, type Route, routes } from '#lib/routes/route-table';
import { DEMO_CLIENT_ID } from '#local/seed';

/**
 * The sample events of `sam local invoke -e` and `npm run invoke`, generated from the route table
 * into events/: one API Gateway REST proxy event per route, as the local gateway delivers it after
 * the authorizer (requestContext.authorizer.clientId is the demo client), with path variables set to
 * the demo seed's ids (local/seed.ts) so that, on the seeded local stack, a route answers 2xx where
 * the seed has what it reads; plus a REQUEST authorizer event and an S3 ObjectCreated event.
 * events/index.json names each event's function and what it answers on a freshly seeded stack, in
 * the order the events are meant to be run (the route table's: creates before reads of the same id).
 *
 * `npm run -s events` rewrites the folder; the sample-events test fails when it is out of date.
 */

export const EVENTS_DIR = fileURLToPath(new URL('../events/', import.meta.url));

/** What invoking an event gives on a freshly seeded local stack. */
export type Expectation =
  | { statusCode: number }
  /** A route without a sample below: anything but a server error. */
  | { statusCode: 'not 5xx' }
  | { errorMessage: string }
  | { result: null };

export interface SampleEvent {
  /** File name under events/. */
  file: string;
  /** The function's logical id in the synthesized template. */
  functionId: string;
  event: unknown;
  expect: Expectation;
}

const SAMPLE_API_KEY = 'srk_sampleSampleSampleSampleSampleSampleSample0';
const DEMO_CLIENT_USER_ID = 'demo-user';
const DEMO_REQUEST = 'DEMO-APPROVED';

/** Path variables by name: the seed's ids, or ids the samples create before they are read. */
const PATH_IDS: Record<string, string> = {
  externalId: DEMO_REQUEST,
  requestExternalId: DEMO_REQUEST,
  appointmentId: 'SAMPLE-V1',
  // Server-made ids (UUIDs) that no sample can know: the reads of them answer 404.
  attachmentId: '00000000-0000-4000-8000-00000000a77a',
  runId: '00000000-0000-4000-8000-0000000000a1',
  batchId: '00000000-0000-4000-8000-0000000000b1',
  webhookId: '00000000-0000-4000-8000-0000000000c1',
  deliveryId: '00000000-0000-4000-8000-0000000000d1',
  name: 'Request',
};

/** A complete, valid request (fictional patient; NPI 1234567893 has a valid check digit). */
const sampleRequest = (externalId: string) => ({
  externalId,
  admissionTypeCode: '3',
  serviceTypeCode: '1',
  placeOfServiceCode: '11',
  fromDate: '2026-12-01',
  toDate: '2026-12-31',
  patient: {
    firstName: 'Ann',
    lastName: 'Example',
    birthDate: '1980-02-03',
    memberId: 'MBR-0001',
    Payer: 'Example Health Plan',
    PayerId: 'EHP01',
  },
  requestingProvider: { roleCode: '1P', npi: '1234567893', lastName: 'Doe', firstName: 'Jane' },
  diagnoses: [{ qualifierCode: 'ABK', code: 'M54.5' }],
  procedures: [{ qualifierCode: 'HC', code: '72148', quantity: 1 }],
});

const SAMPLE_PORTAL_ACCOUNT = 'sample-portal-account';
const SAMPLE_PAYER_CONNECTION = 'sample-payer-connection';

interface RouteSample {
  pathParameters?: Record<string, string>;
  body?: unknown;
  status: number;
}

/**
 * Per handler: what differs from PATH_IDS, the body, and the status on a freshly seeded stack when
 * the events run in index order. A route missing here still gets an event (no body), expected to
 * answer anything but a server error: add its row here for a real sample.
 */
const ROUTE_SAMPLES: Partial<Record<HandlerId, RouteSample>> = {
  'requests/upsert-request-v1': { body: sampleRequest('SAMPLE-V1'), status: 201 },
  'requests/patch-request-v1': { body: { quantity: 4, quantityTypeCode: 'VS' }, status: 200 },
  'requests/create-request': { body: sampleRequest('SAMPLE-0001'), status: 201 },
  'requests/replace-request': {
    pathParameters: { externalId: 'SAMPLE-0001' },
    body: sampleRequest('SAMPLE-0001'),
    status: 200,
  },
  'requests/get-request': { status: 200 },
  'requests/get-authorization-history': { status: 200 },
  'attachments/create-attachment': {
    body: {
      fileName: 'referral.pdf',
      contentType: 'application/pdf',
      size: 1024,
      sha256: 'a'.repeat(64),
    },
    status: 201,
  },
  'attachments/list-attachments': { status: 200 },
  'attachments/get-attachment': { status: 404 },
  'attachments/download-attachment': { status: 404 },
  'attachments/delete-attachment': { status: 404 },
  'portal-accounts/create-portal-account': {
    body: {
      externalId: SAMPLE_PORTAL_ACCOUNT,
      clientUserId: DEMO_CLIENT_USER_ID,
      portalId: 'sandbox',
      username: 'sample.user',
      password: 'sample-password',
    },
    status: 201,
  },
  'portal-accounts/list-portal-accounts': { pathParameters: { externalId: DEMO_CLIENT_USER_ID }, status: 200 },
  'portal-accounts/get-portal-account': { pathParameters: { externalId: 'demo-sandbox' }, status: 200 },
  'portal-accounts/replace-portal-account': {
    pathParameters: { externalId: SAMPLE_PORTAL_ACCOUNT },
    body: { clientUserId: DEMO_CLIENT_USER_ID, portalId: 'sandbox', username: 'sample.user2' },
    status: 200,
  },
  'portal-accounts/delete-portal-account': { pathParameters: { externalId: SAMPLE_PORTAL_ACCOUNT }, status: 204 },
  'portal-accounts/filter-portal-accounts': { body: { clientUserId: DEMO_CLIENT_USER_ID }, status: 200 },
  // A payer the directory has no API for (422 no_payer_api): so the connection's reads and writes answer 404.
  'payers/create-payer-connection': {
    body: {
      externalId: SAMPLE_PAYER_CONNECTION,
      clientUserId: DEMO_CLIENT_USER_ID,
      payerId: 'SAMPLE-NO-API',
      clientId: 'sample-client-id',
    },
    status: 422,
  },
  'payers/list-payer-connections': { pathParameters: { externalId: DEMO_CLIENT_USER_ID }, status: 200 },
  'payers/get-payer-connection': { pathParameters: { externalId: SAMPLE_PAYER_CONNECTION }, status: 404 },
  'payers/replace-payer-connection': {
    pathParameters: { externalId: SAMPLE_PAYER_CONNECTION },
    body: { clientUserId: DEMO_CLIENT_USER_ID, payerId: 'SAMPLE-NO-API', clientId: 'sample-client-id' },
    status: 404,
  },
  'payers/delete-payer-connection': { pathParameters: { externalId: SAMPLE_PAYER_CONNECTION }, status: 404 },
  // The demo request's payer has no PAS endpoint (a portal-only payer): the start says so, nothing is sent.
  'requests/submit-request': {
    pathParameters: { externalId: DEMO_REQUEST },
    body: { clientUserId: DEMO_CLIENT_USER_ID, dryRun: true },
    status: 422,
  },
  // The demo request was never submitted to a payer's API: there is no claim to cancel, nothing is sent.
  'requests/cancel-request': {
    pathParameters: { externalId: DEMO_REQUEST },
    body: { clientUserId: DEMO_CLIENT_USER_ID },
    status: 422,
  },
  // A well-formed key set id no client has: the JWKS route answers 404 without a key.
  'payers/get-payer-jwks': { pathParameters: { keySetId: 'AAAAAAAAAAAAAAAAAAAAAA' }, status: 404 },
  // A well-formed subscription id nobody has: the notification route answers 404 before any secret is asked.
  'payers/receive-payer-notification': {
    pathParameters: { subscriptionId: 'sample-subscription-0000' },
    body: {
      resourceType: 'Bundle',
      type: 'history',
      entry: [{ resource: { resourceType: 'Parameters', parameter: [{ name: 'type', valueCode: 'heartbeat' }] } }],
    },
    status: 404,
  },
  'rpa/issue-rpa-access-token': { body: { clientUserId: DEMO_CLIENT_USER_ID }, status: 200 },
  // No scraper token in a sample: the session answers 401, as it does to anyone without one.
  'rpa/get-scraper-session': { status: 401 },
  'rpa/start-view-on-page': { body: { clientUserId: DEMO_CLIENT_USER_ID }, status: 202 },
  'rpa/get-rpa-run': { status: 404 },
  'rpa/start-check-auth-status': {
    body: { clientUserId: DEMO_CLIENT_USER_ID, requestExternalIds: [DEMO_REQUEST] },
    status: 202,
  },
  'rpa/get-check-auth-status': { status: 404 },
  'webhooks/create-webhook': {
    body: { url: 'https://hooks.example.com/service-review', events: ['authorization.status_changed'] },
    status: 201,
  },
  'webhooks/list-webhooks': { status: 200 },
  'webhooks/get-webhook': { status: 404 },
  'webhooks/delete-webhook': { status: 404 },
  'webhooks/rotate-webhook-secret': { status: 404 },
  'webhooks/test-webhook': { status: 404 },
  'webhooks/list-webhook-deliveries': { status: 404 },
  'webhooks/redeliver-webhook-delivery': { status: 404 },
  'schemas/list-schemas': { status: 200 },
  'schemas/get-schema': { status: 200 },
  'schemas/validate-payload': { body: sampleRequest('SAMPLE-0002'), status: 200 },
  'docs/get-openapi-document': { status: 200 },
  'docs/get-api-reference': { status: 200 },
  'docs/get-api-reference-script': { status: 200 },
};

const kebab = (pascal: string) => pascal.replace(/(?<=[a-z0-9])([A-Z])/g, '-$1').toLowerCase();

const HOST = 'abcdef1234.execute-api.us-east-1.amazonaws.com';
const REQUEST_TIME = { requestTime: '01/Jan/2026:12:00:00 +0000', requestTimeEpoch: 1767268800000 };

/** Both header shapes API Gateway sends. */
const headerShapes = (headers: Record<string, string>) => ({
  headers,
  multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
});

const proxyEvent = (route: Route, index: number) => {
  const sample = ROUTE_SAMPLES[route.handler];
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const pathParameters = Object.fromEntries(
    names.map((name) => [name, sample?.pathParameters?.[name] ?? PATH_IDS[name] ?? `sample-${name}`]),
  );
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(pathParameters[name]!));
  const body = sample?.body === undefined ? null : JSON.stringify(sample.body);
  const authorized = route.auth !== 'scraper-token';
  return {
    resource: route.path,
    path,
    httpMethod: route.method,
    ...headerShapes({
      Accept: 'application/json',
      ...(body ? { 'Content-Type': 'application/json' } : {}),
      Host: HOST,
      'User-Agent': 'sample-client/1.0',
      'X-Forwarded-Proto': 'https',
      ...(authorized ? { 'x-api-key': SAMPLE_API_KEY } : {}),
    }),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: names.length ? pathParameters : null,
    stageVariables: null,
    requestContext: {
      resourceId: 'sample',
      resourcePath: route.path,
      httpMethod: route.method,
      ...REQUEST_TIME,
      path: `/prod${path}`,
      accountId: '123456789012',
      protocol: 'HTTP/1.1',
      stage: 'prod',
      domainPrefix: 'abcdef1234',
      requestId: `00000000-0000-4000-8000-${String(index + 1).padStart(12, '0')}`,
      identity: { sourceIp: '203.0.113.10', userAgent: 'sample-client/1.0' },
      // What the authorizer puts there for the demo client's key (functions/authorizer.ts).
      ...(authorized
        ? { authorizer: { principalId: DEMO_CLIENT_ID, clientId: DEMO_CLIENT_ID, keyId: 'sample-key' } }
        : {}),
      domainName: HOST,
      apiId: 'abcdef1234',
    },
    body,
    isBase64Encoded: false,
  };
};

const authorizerEvent = {
  type: 'REQUEST',
  methodArn: 'arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/GET/api/external/v1.1/Schemas',
  resource: '/api/external/v1.1/Schemas',
  path: '/api/external/v1.1/Schemas',
  httpMethod: 'GET',
  ...headerShapes({ Accept: 'application/json', Host: HOST, 'x-api-key': SAMPLE_API_KEY }),
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  pathParameters: {},
  stageVariables: null,
  requestContext: {
    resourceId: 'sample',
    resourcePath: '/api/external/v1.1/Schemas',
    httpMethod: 'GET',
    ...REQUEST_TIME,
    path: '/prod/api/external/v1.1/Schemas',
    accountId: '123456789012',
    protocol: 'HTTP/1.1',
    stage: 'prod',
    domainPrefix: 'abcdef1234',
    requestId: '00000000-0000-4000-8000-000000000000',
    identity: { sourceIp: '203.0.113.10', userAgent: 'sample-client/1.0' },
    domainName: HOST,
    apiId: 'abcdef1234',
  },
};

/** An object under the demo client's prefix that no attachment record claims: the verifier deletes it. */
const objectCreatedEvent = (bucketName: string) => ({
  Records: [
    {
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      awsRegion: 'us-east-1',
      eventTime: '2026-01-01T12:00:00.000Z',
      eventName: 'ObjectCreated:Put',
      userIdentity: { principalId: 'AWS:SAMPLE' },
      requestParameters: { sourceIPAddress: '203.0.113.10' },
      responseElements: { 'x-amz-request-id': 'SAMPLE', 'x-amz-id-2': 'SAMPLE' },
      s3: {
        s3SchemaVersion: '1.0',
        configurationId: 'sample',
        bucket: {
          name: bucketName,
          ownerIdentity: { principalId: 'SAMPLE' },
          arn: `arn:aws:s3:::${bucketName}`,
        },
        object: { key: `${DEMO_CLIENT_ID}/sample/unclaimed.pdf`, size: 1024, eTag: 'sample', sequencer: '0' },
      },
    },
  ],
});

/** Every sample event, in the order they are meant to run. */
export const sampleEvents = (): SampleEvent[] => [
  // The sample key belongs to no client: the authorizer refuses it (API Gateway's 401).
  {
    file: 'authorizer.json',
    functionId: functionLogicalId('Authorizer'),
    event: authorizerEvent,
    expect: { errorMessage: 'Unauthorized' },
  },
  ...routes.map((route, index): SampleEvent => {
    const name = functionNameOf(route);
    const status = ROUTE_SAMPLES[route.handler]?.status;
    return {
      file: `${kebab(name)}.json`,
      functionId: functionLogicalId(name),
      event: proxyEvent(route, index),
      expect: { statusCode: status ?? 'not 5xx' },
    };
  }),
  ...eventFunctions.map(
    (fn): SampleEvent => ({
      file: `${kebab(fn.name)}.json`,
      functionId: functionLogicalId(fn.name),
      // The local stack's bucket name (local/stack.ts); BUCKET_NAME decides what the function reads.
      event: objectCreatedEvent('service-review-attachments'),
      expect: { result: null },
    }),
  ),
];

/** events/index.json: which function each event is for, and what it answers. */
export const eventIndex = (events: SampleEvent[]) =>
  events.map(({ file, functionId, expect }) => ({ file, functionId, expect }));

export const INDEX_FILE = 'index.json';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Rewrites events/ (keeping env-vars files): the generated JSON of every sample, and the index. */
export const writeSampleEvents = (dir = EVENTS_DIR) => {
  const events = sampleEvents();
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(dir)) {
    if (file.endsWith('.json') && !file.startsWith('env-vars')) rmSync(join(dir, file));
  }
  for (const { file, event } of events) writeFileSync(join(dir, file), json(event));
  writeFileSync(join(dir, INDEX_FILE), json(eventIndex(events)));
  return events;
};

/** The files' expected content, for the test that holds events/ to the route table. */
export const expectedFiles = (): Record<string, string> => {
  const events = sampleEvents();
  return Object.fromEntries([
    ...events.map(({ file, event }) => [file, json(event)]),
    [INDEX_FILE, json(eventIndex(events))],
  ]);
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const events = writeSampleEvents();
  const generic = events.filter((event) => 'statusCode' in event.expect && event.expect.statusCode === 'not 5xx');
  process.stdout.write(`wrote ${events.length} sample events to events/\n`);
  for (const event of generic) {
    process.stdout.write(`  ${event.file}: no sample in scripts/sample-events.ts (ROUTE_SAMPLES), so no body\n`);
  }
}
