import { randomBytes } from 'node:crypto';
import type { S3Event } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_MARKER } from '#lib/audit/audit-record';
import { keys } from '#lib/object-keys';
import { METRIC, METRICS_NAMESPACE } from '#lib/observability/names';
import { functionNameOf, routes } from '#lib/routes/route-table';
import { lambdaContext } from '#local/gateway/invoke';
import { newTenant, uniqueId } from '#test/support/api';
import { validRequest } from '#test/support/fixtures';
import { loadSourceHandler, startInProcessGateway } from '#test/support/in-process-gateway';
import { captureProcessOutput } from '#test/support/output-capture';
import { multipart, sample } from './attachments-support.ts';

/*
 * The logs of a full request cycle carry no PHI and say whose request, which route and which
 * invocation they belong to. The handlers run in this process behind an in-process gateway (as in
 * portal-accounts-secrets.test.ts: the shared stack's output is another process's), at every level
 * and with metrics on, while stdout and stderr are captured.
 */
const unique = randomBytes(4).toString('hex');
const phi = {
  firstName: `Zelphine${unique}`,
  lastName: `Quarrington${unique}`,
  birthDate: '1961-07-19',
  memberId: `MBR-${unique.toUpperCase()}-77`,
  payer: `Harbourside Mutual ${unique}`,
  newLastName: `Vandersloot${unique}`,
  fileName: `Zelphine-${unique}-lumbar-mri.pdf`,
  description: `MRI of Zelphine ${unique}, lumbar spine`,
};

let gateway: Awaited<ReturnType<typeof startInProcessGateway>> | undefined;
let baseUrl: string;
let capture: ReturnType<typeof captureProcessOutput> | undefined;
const output = () => capture?.text() ?? '';

beforeAll(async () => {
  process.env.LOG_LEVEL = 'debug';
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  gateway = await startInProcessGateway();
  baseUrl = gateway.baseUrl;
  capture = captureProcessOutput();
});

afterAll(async () => {
  capture?.restore();
  delete process.env.POWERTOOLS_METRICS_DISABLED;
  await gateway?.close();
});

const send = async (method: string, path: string, apiKey: string, body?: string | Buffer, contentType?: string) => {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(contentType ? { 'content-type': contentType } : {}) },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  return { status: res.status, text, requestId: res.headers.get('x-amzn-requestid') ?? '' };
};

/** The captured output's JSON lines: log lines, and EMF lines (those with `_aws`). */
const jsonLines = () =>
  output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>);

describe('logs of a full request cycle', () => {
  const v11 = '/api/external/v1.1';
  const requestIds: Record<string, string> = {};
  let clientId: string;
  let externalId: string;

  it('creates, reads, patches a request with PHI and attaches a file to it', async () => {
    const tenant = await newTenant('logging');
    clientId = tenant.clientId;
    externalId = uniqueId('log');
    const request = validRequest(externalId);
    const body = {
      ...request,
      patient: {
        ...request.patient,
        firstName: phi.firstName,
        lastName: phi.lastName,
        birthDate: phi.birthDate,
        memberId: phi.memberId,
        Payer: phi.payer,
      },
    };
    const created = await send('POST', `${v11}/Requests`, tenant.apiKey, JSON.stringify(body), 'application/json');
    expect(created.status, created.text).toBe(201);
    requestIds.CreateRequest = created.requestId;

    const read = await send('GET', `${v11}/Requests/${externalId}`, tenant.apiKey);
    expect(read.status).toBe(200);
    expect(read.text).toContain(phi.firstName);
    requestIds.GetRequest = read.requestId;

    const patched = await send(
      'PATCH',
      `/api/external/v1/Requests/${externalId}`,
      tenant.apiKey,
      JSON.stringify({ patient: { lastName: phi.newLastName } }),
      'application/merge-patch+json',
    );
    expect(patched.status, patched.text).toBe(200);
    requestIds.PatchRequestV1 = patched.requestId;

    // A refused body (a date that is no date, next to the PHI) must not be echoed into the logs either.
    const refused = await send(
      'PATCH',
      `/api/external/v1/Requests/${externalId}`,
      tenant.apiKey,
      JSON.stringify({ patient: { lastName: phi.newLastName, birthDate: `${phi.birthDate}T99` } }),
      'application/merge-patch+json',
    );
    expect(refused.status).toBe(400);

    const form = multipart([
      { name: 'file', file: { fileName: phi.fileName, contentType: 'application/pdf', bytes: sample.pdf() } },
      { name: 'description', value: phi.description },
    ]);
    const attached = await send(
      'POST',
      `${v11}/Requests/${externalId}/Attachments`,
      tenant.apiKey,
      form.body,
      form.contentType,
    );
    expect(attached.status, attached.text).toBe(201);
    requestIds.CreateAttachment = attached.requestId;
    const { attachmentId } = JSON.parse(attached.text) as { attachmentId: string };

    const listed = await send('GET', `${v11}/Requests/${externalId}/Attachments`, tenant.apiKey);
    expect(listed.status).toBe(200);
    expect(listed.text).toContain(phi.fileName);

    // The verifier, as S3's notification invokes it (the shared stack's own run is in another process).
    const verify = await loadSourceHandler('attachments/verify-uploaded-attachment');
    const event = {
      Records: [
        {
          eventName: 'ObjectCreated:Put',
          s3: { object: { key: encodeURIComponent(keys.attachmentObject(clientId, externalId, attachmentId)) } },
        },
      ],
    } as unknown as S3Event;
    await verify(event, lambdaContext('VerifyUploadedAttachment'));
  });

  it('never logs a PHI value, at any level, in any line', () => {
    expect(output().length).toBeGreaterThan(0);
    for (const value of Object.values(phi)) {
      expect(output().includes(value), `the output contains ${value}`).toBe(false);
      expect(output().toLowerCase().includes(value.toLowerCase()), `the output contains ${value}`).toBe(false);
    }
  });

  it('gives each line its API Gateway request id, function, cold start, client and route', () => {
    // The service log's lines; the audit records (lib/audit/, their own fields) are audit.test.ts's.
    const lines = jsonLines().filter(
      (line) => line.service === 'service-review' && line.level && line[AUDIT_MARKER.field] === undefined,
    );
    for (const [route, requestId] of Object.entries(requestIds)) {
      const ofRequest = lines.filter((line) => line.requestId === requestId);
      expect(ofRequest.length, route).toBeGreaterThan(0);
      for (const line of ofRequest) {
        expect(line, route).toMatchObject({
          route,
          clientId,
          function_name: routes.find((r) => functionNameOf(r) === route)!.handler,
          function_request_id: expect.any(String),
          cold_start: expect.any(Boolean),
        });
      }
    }
    const verifier = lines.filter((line) => line.route === 'VerifyUploadedAttachment');
    expect(verifier.length).toBeGreaterThan(0);
    // Every handler here shares this process, hence one cold start for all (in Lambda, one per container).
    expect(verifier[0]).toMatchObject({ function_name: 'VerifyUploadedAttachment', cold_start: expect.any(Boolean) });
  });

  it('writes one EMF line per call with the route, and the attachment verdict', () => {
    const emf = jsonLines().filter((line) => line._aws);
    for (const route of Object.keys(requestIds)) {
      const line = emf.find((candidate) => candidate.route === route);
      expect(line, route).toMatchObject({
        service: 'service-review',
        [METRIC.requests]: 1,
        [METRIC.serverErrors]: 0,
        [METRIC.latency]: expect.any(Number),
      });
      expect(line!._aws.CloudWatchMetrics[0].Namespace).toBe(METRICS_NAMESPACE);
    }
    expect(emf.find((line) => line.route === 'PatchRequestV1' && line[METRIC.clientErrors] === 1)).toBeDefined();
    expect(emf.find((line) => line[METRIC.attachmentVerdicts] === 1)).toMatchObject({ verdict: expect.any(String) });
  });
});

describe('the log allow-list', () => {
  it('drops every field it does not know, and values that are not scalars, naming only the keys', async () => {
    const { log } = await import('#lib/observability/logger');
    const before = output().length;
    const smuggled = {
      attachmentId: 'att-1',
      patient: { firstName: phi.firstName },
      firstName: phi.firstName,
      errorName: { message: phi.lastName },
      error: new Error(`No such member ${phi.memberId}`),
    } as unknown as Parameters<typeof log.info>[1];
    log.warn('Allow-list probe', smuggled);
    const line = output()
      .slice(before)
      .split('\n')
      .find((candidate) => candidate.includes('Allow-list probe'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({
      level: 'warn',
      attachmentId: 'att-1',
      droppedKeys: 'patient,firstName,errorName,error',
    });
    for (const value of [phi.firstName, phi.lastName, phi.memberId]) expect(line).not.toContain(value);
  });
});
