import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cloudWatchAuditSink } from '#lib/audit/cloudwatch-audit-sink';
import { cloudWatchLogsEndpoint, cloudWatchLogsWriter } from '#lib/aws/cloudwatch-logs';
import { auditEvent } from '#test/support/fixtures';

const REGION = 'eu-west-3';
const CREDENTIALS = {
  accessKeyId: 'AKIDAUDITTEST',
  secretAccessKey: 'audit-test-secret',
  sessionToken: 'audit-session',
};

interface Received {
  target: string | undefined;
  contentType: string | undefined;
  body: Record<string, unknown>;
  signatureValid: boolean;
}
type Answer = { status: number; body?: unknown };

/**
 * CloudWatch Logs as far as the audit trail sees it (nothing of AWS runs here): a local HTTP server
 * that checks each request's SigV4 signature the way AWS does, by signing the request it received
 * again with the same credentials and comparing, records what it was asked, and answers as `answer` says.
 */
const verifier = new SignatureV4({ service: 'logs', region: REGION, credentials: CREDENTIALS, sha256: Sha256 });
const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/;

const signatureValid = async (request: IncomingMessage, body: string) => {
  const authorization = request.headers.authorization ?? '';
  const [, keyId, region, service, signedHeaders] = AUTHORIZATION.exec(authorization) ?? [];
  if (keyId !== CREDENTIALS.accessKeyId || region !== REGION || service !== 'logs' || !signedHeaders) return false;
  const amzDate = String(request.headers['x-amz-date']);
  const signingDate = new Date(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
  const headers = Object.fromEntries(signedHeaders.split(';').map((name) => [name, String(request.headers[name])]));
  const expected = await verifier.sign(
    new HttpRequest({
      method: request.method,
      protocol: 'http:',
      hostname: '127.0.0.1',
      path: request.url,
      headers,
      body,
    }),
    { signingDate },
  );
  return expected.headers.authorization === authorization;
};

let answer: (received: Received, index: number) => Answer = () => ({ status: 200, body: {} });
const received: Received[] = [];
const server = createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString('utf8');
  const entry: Received = {
    target: request.headers['x-amz-target'] as string | undefined,
    contentType: request.headers['content-type'],
    body: JSON.parse(body),
    signatureValid: await signatureValid(request, body),
  };
  received.push(entry);
  const { status, body: answerBody } = entry.signatureValid
    ? answer(entry, received.length - 1)
    : { status: 400, body: { __type: 'InvalidSignatureException', message: 'The request signature does not match' } };
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
  response.end(answerBody === undefined ? '' : JSON.stringify(answerBody));
});
let endpoint = '';
beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());
afterEach(() => {
  received.length = 0;
  answer = () => ({ status: 200, body: {} });
  vi.unstubAllEnvs();
});

const writer = (change: Parameters<typeof cloudWatchLogsWriter>[0] = {}) =>
  cloudWatchLogsWriter({ region: REGION, endpoint, credentials: CREDENTIALS, baseDelayMs: 1, ...change });
const error = (type: string, message = 'from the test server') => ({ __type: type, message });
const targets = () => received.map((entry) => entry.target);

describe('the CloudWatch Logs audit sink', () => {
  it('creates its own stream once, then puts each event as one JSON message, every request signed', async () => {
    const sink = cloudWatchAuditSink(writer(), '/ServiceReviewData/audit', 'GetRequest');
    await sink.write(auditEvent());
    await sink.write(auditEvent({ requestId: 'gw-2' }));
    expect(targets()).toEqual([
      'Logs_20140328.CreateLogStream',
      'Logs_20140328.PutLogEvents',
      'Logs_20140328.PutLogEvents',
    ]);
    expect(received.every((entry) => entry.signatureValid)).toBe(true);
    expect(received.every((entry) => entry.contentType === 'application/x-amz-json-1.1')).toBe(true);
    const [create, first, second] = received.map((entry) => entry.body);
    expect(create).toEqual({ logGroupName: '/ServiceReviewData/audit', logStreamName: expect.any(String) });
    const { logStreamName } = create as { logStreamName: string };
    expect(logStreamName).toMatch(/^\d{4}-\d\d-\d\d\/GetRequest\/[0-9a-f-]{36}$/);
    expect(first).toEqual({
      logGroupName: '/ServiceReviewData/audit',
      logStreamName,
      logEvents: [{ timestamp: Date.parse(auditEvent().time), message: JSON.stringify(auditEvent()) }],
    });
    expect(JSON.parse((second as { logEvents: { message: string }[] }).logEvents[0]!.message).requestId).toBe('gw-2');
  });

  it('takes an existing stream as its own', async () => {
    answer = ({ target }) =>
      target === 'Logs_20140328.CreateLogStream'
        ? { status: 400, body: error('com.amazonaws.logs#ResourceAlreadyExistsException') }
        : { status: 200, body: {} };
    await cloudWatchAuditSink(writer(), 'audit').write(auditEvent());
    expect(targets()).toEqual(['Logs_20140328.CreateLogStream', 'Logs_20140328.PutLogEvents']);
  });

  it('retries a failed stream creation with the next event', async () => {
    answer = (_, index) => (index === 0 ? { status: 400, body: error('AccessDeniedException') } : { status: 200 });
    const sink = cloudWatchAuditSink(writer(), 'audit');
    await expect(sink.write(auditEvent())).rejects.toMatchObject({ name: 'AccessDeniedException' });
    await sink.write(auditEvent());
    expect(targets()).toEqual([
      'Logs_20140328.CreateLogStream',
      'Logs_20140328.CreateLogStream',
      'Logs_20140328.PutLogEvents',
    ]);
  });

  it('rejects an event CloudWatch Logs answered 200 but did not keep', async () => {
    answer = ({ target }) =>
      target === 'Logs_20140328.PutLogEvents'
        ? { status: 200, body: { rejectedLogEventsInfo: { tooOldLogEventEndIndex: 1 } } }
        : { status: 200, body: {} };
    await expect(cloudWatchAuditSink(writer(), 'audit').write(auditEvent())).rejects.toThrow(
      /rejected the audit event/,
    );
  });
});

describe('the CloudWatch Logs writer', () => {
  const put = { logGroupName: 'audit', logStreamName: 's', logEvents: [{ timestamp: 1, message: '{}' }] };

  it('is refused by a server that checks the signature when it signs with another secret', async () => {
    const wrong = writer({ credentials: { ...CREDENTIALS, secretAccessKey: 'not-the-secret' } });
    await expect(wrong.putLogEvents(put)).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      statusCode: 400,
    });
    expect(received.map((entry) => entry.signatureValid)).toEqual([false]);
  });

  it('rejects a client error with its type and message, without retrying', async () => {
    answer = () => ({ status: 400, body: error('com.amazonaws.logs#ResourceNotFoundException', 'no such group') });
    await expect(writer().putLogEvents(put)).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      message: 'no such group',
      statusCode: 400,
    });
    expect(received).toHaveLength(1);
  });

  it('retries throttling, then succeeds', async () => {
    answer = (_, index) => (index < 2 ? { status: 400, body: error('ThrottlingException') } : { status: 200 });
    await expect(writer().putLogEvents(put)).resolves.toEqual({});
    expect(received).toHaveLength(3);
    expect(received.every((entry) => entry.signatureValid && entry.target === 'Logs_20140328.PutLogEvents')).toBe(true);
  });

  it('gives up on a server error after a bounded number of attempts', async () => {
    answer = () => ({ status: 500 });
    await expect(
      writer({ maxAttempts: 4 }).createLogStream({ logGroupName: 'audit', logStreamName: 's' }),
    ).rejects.toMatchObject({ name: 'HttpStatus500', statusCode: 500 });
    expect(received).toHaveLength(4);
  });

  it('retries when nothing answers, then rejects', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    await once(closed, 'close');
    await expect(writer({ endpoint: `http://127.0.0.1:${port}` }).putLogEvents(put)).rejects.toMatchObject({
      name: 'NoAnswerError',
      message: expect.stringMatching(/CloudWatch Logs did not answer/),
    });
  });

  it('gives up on a server that never answers, each attempt bounded', async () => {
    let requests = 0;
    const silent = createServer(() => {
      requests++;
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as AddressInfo;
    try {
      const hung = writer({ endpoint: `http://127.0.0.1:${port}`, requestTimeoutMs: 200, maxAttempts: 2 });
      await expect(hung.putLogEvents(put)).rejects.toThrow(/CloudWatch Logs did not answer/);
      expect(requests).toBe(2);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('takes region, endpoint and credentials from the environment, as the SDK does', async () => {
    vi.stubEnv('AWS_REGION', REGION);
    vi.stubEnv('AWS_ENDPOINT_URL_CLOUDWATCH_LOGS', endpoint);
    vi.stubEnv('AWS_ACCESS_KEY_ID', CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', CREDENTIALS.secretAccessKey);
    vi.stubEnv('AWS_SESSION_TOKEN', CREDENTIALS.sessionToken);
    await cloudWatchLogsWriter().createLogStream({ logGroupName: 'audit', logStreamName: 's' });
    expect(received.map((entry) => entry.signatureValid)).toEqual([true]);
  });

  it('fails at once without a region', async () => {
    vi.stubEnv('AWS_REGION', '');
    await expect(cloudWatchLogsWriter({ endpoint }).putLogEvents(put)).rejects.toThrow(/AWS_REGION is not set/);
    expect(received).toHaveLength(0);
  });

  it('defaults to the region’s public endpoint', () => {
    expect(cloudWatchLogsEndpoint('us-east-1', {})).toBe('https://logs.us-east-1.amazonaws.com');
    expect(cloudWatchLogsEndpoint('cn-north-1', {})).toBe('https://logs.cn-north-1.amazonaws.com.cn');
    expect(cloudWatchLogsEndpoint('us-east-1', { AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: 'http://localhost:4566' })).toBe(
      'http://localhost:4566',
    );
  });
});
