import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { appendAuditLine, localAuditFileOf } from '#lib/audit/audit-file';
import { AUDIT_MARKER, AUDIT_RECORD_FIELDS, type AuditLine } from '#lib/audit/audit-record';
import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { log } from '#lib/observability/logger';
import { type HandlerId, routes } from '#lib/routes/route-table';
import { auditRecord } from '#test/support/fixtures';

/*
 * The audit trail's records as a handler behind endpoint() writes them: lines on stdout (what the
 * deployed trail ships), the same lines in the local audit file, intent before the handler, outcome
 * after, and nothing of what the client sent but ids.
 */

const dir = mkdtempSync(join(tmpdir(), 'audit-test-'));
const auditFile = join(dir, 'audit.jsonl');
const saved = { LOCAL_AUDIT_FILE: process.env.LOCAL_AUDIT_FILE, LOG_LEVEL: process.env.LOG_LEVEL };
// Never the test stack's file (LOCAL_STATE_DIR, shared with the integration tests): one of this file's own.
beforeAll(() => {
  process.env.LOCAL_AUDIT_FILE = auditFile;
});
afterAll(() => {
  Object.assign(process.env, saved);
  if (saved.LOCAL_AUDIT_FILE === undefined) delete process.env.LOCAL_AUDIT_FILE;
  rmSync(dir, { recursive: true, force: true });
});

// PHI a client may send: distinctive, so a substring search cannot hit an id.
const PHI = { lastName: 'Quixotic', firstName: 'Zelda', memberId: 'MBR-ZQ-4242' };
const expectNoPhi = (text: string) => {
  for (const value of Object.values(PHI)) expect(text).not.toContain(value);
};

/** Every line written to stdout while a test runs, parsed; and the audit lines among them. */
let stdout: { mock: { calls: unknown[][] } };
let stderr: { mock: { calls: unknown[][] } };
const written = (): string[] => stdout.mock.calls.map(([chunk]) => String(chunk));
const auditLines = () =>
  written()
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line[AUDIT_MARKER.field] === AUDIT_MARKER.value) as unknown as AuditLine[];
beforeEach(() => {
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  // The service log's warnings and errors (the throwing handler's), kept off the report.
  stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  rmSync(auditFile, { force: true });
});
afterEach(() => vi.restoreAllMocks());

const routeOf = (handler: HandlerId) => routes.find((route) => route.handler === handler)!;
const eventOf = (handler: HandlerId, fields: Partial<APIGatewayProxyEvent> = {}) => {
  const route = routeOf(handler);
  return {
    httpMethod: route.method,
    resource: route.path,
    path: route.path,
    headers: {},
    pathParameters: null,
    queryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      requestId: 'gw-9',
      identity: { sourceIp: '192.0.2.9' },
      authorizer: { clientId: 'client-1', keyId: 'key-1' },
    },
    ...fields,
  } as unknown as APIGatewayProxyEvent;
};
const getRequest = eventOf('requests/get-request', { pathParameters: { externalId: 'REQ-1' } });
const context = { awsRequestId: 'fn-9', getRemainingTimeInMillis: () => 29_000 } as Context;

describe('an audited call', () => {
  it('writes its intent before the handler runs and its outcome after, one line each, linked by request ids', async () => {
    let seenByHandler: AuditLine[] = [];
    const handler = endpoint(async () => {
      seenByHandler = auditLines();
      return json(200, { patient: { lastName: PHI.lastName } });
    });
    expect((await handler(getRequest as never, context)).statusCode).toBe(200);

    expect(seenByHandler.map((line) => line.phase)).toEqual(['intent']);
    const [intent, outcome] = auditLines();
    expect(auditLines()).toHaveLength(2);
    const expected = {
      level: 'info',
      service: 'service-review',
      audit: 'v1',
      action: 'request.read',
      route: 'GET /api/external/v1.1/Requests/{externalId}',
      clientId: 'client-1',
      credential: 'apiKey',
      keyId: 'key-1',
      clientUserId: null,
      resource: { type: 'request', ids: { requestExternalId: 'REQ-1' } },
      requestId: 'gw-9',
      lambdaRequestId: 'fn-9',
      sourceIp: '192.0.2.9',
    };
    expect(intent).toEqual({
      ...expected,
      message: 'Audit intent',
      timestamp: expect.any(String),
      phase: 'intent',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      outcome: null,
    });
    expect(outcome).toEqual({
      ...expected,
      message: 'Audit outcome',
      timestamp: expect.any(String),
      phase: 'outcome',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      outcome: 200,
    });
    // The marker and Powertools' fields first, then the record's fields, in a fixed order.
    expect(Object.keys(outcome!)).toEqual([
      'level',
      'message',
      'timestamp',
      'service',
      'audit',
      ...AUDIT_RECORD_FIELDS,
    ]);
    expectNoPhi(written().join(''));
  });

  it('that throws still leaves its intent, then an error outcome with the status sent, and nothing of the error', async () => {
    const handler = endpoint(async () => {
      throw new Error(`DynamoDB refused the item of ${PHI.firstName} ${PHI.lastName}`);
    });
    const response = await handler(getRequest as never, context);
    expect(response.statusCode).toBe(500);
    expect(auditLines().map((line) => [line.phase, line.outcome])).toEqual([
      ['intent', null],
      ['outcome', 500],
    ]);
    expectNoPhi(
      auditLines()
        .map((line) => JSON.stringify(line))
        .join(''),
    );
  });

  it('that never ends (a timeout, a crash) has its intent written already', async () => {
    let release = () => {};
    let started = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const handler = endpoint(async () => {
      started();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return json(200, {});
    });
    const pending = handler(getRequest as never, context);
    await running;
    expect(auditLines().map((line) => line.phase)).toEqual(['intent']);
    release();
    await pending;
  });

  it('records ids only: a name where an id belongs is null, and no body value is written', async () => {
    const handler = endpoint(async () => json(200, {}), { json: {} });
    const event = eventOf('portal-accounts/filter-portal-accounts', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientUserId: `${PHI.firstName} ${PHI.lastName}`, search: PHI.memberId }),
    });
    expect((await handler(event as never, context)).statusCode).toBe(200);
    const lines = auditLines();
    expect(lines.map((line) => [line.phase, line.action, line.clientUserId])).toEqual([
      ['intent', 'portalAccount.filter', null],
      ['outcome', 'portalAccount.filter', null],
    ]);
    expectNoPhi(written().join(''));
  });

  it('refused before its handler (a malformed body) leaves its outcome only', async () => {
    const handler = endpoint(async () => json(201, {}), { json: {} });
    const event = eventOf('requests/create-request', {
      headers: { 'content-type': 'application/json' },
      body: `{"patient":{"lastName":"${PHI.lastName}"`,
    });
    expect((await handler(event as never, context)).statusCode).toBe(400);
    expect(auditLines().map((line) => [line.phase, line.action, line.outcome])).toEqual([
      ['outcome', 'request.create', 400],
    ]);
    expectNoPhi(written().join(''));
  });

  it('is written whatever the log level: the service log at ERROR does not silence the trail', async () => {
    process.env.LOG_LEVEL = 'ERROR';
    process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
    try {
      const handler = endpoint(async () => json(200, {}));
      await handler(getRequest as never, context);
      log.info('Request handled');
      expect(auditLines().map((line) => line.phase)).toEqual(['intent', 'outcome']);
      expect(written().filter((line) => line.includes('Request handled'))).toEqual([]);
    } finally {
      process.env.LOG_LEVEL = saved.LOG_LEVEL;
      delete process.env.POWERTOOLS_LOG_LEVEL;
    }
  });

  it('of a route the table does not audit writes nothing', async () => {
    const handler = endpoint(async () => json(200, {}));
    await handler(eventOf('schemas/list-schemas') as never, context);
    expect(auditLines()).toEqual([]);
  });
});

describe('the marker', () => {
  it('cannot be written through the service log: its formatter drops the field', () => {
    log.warn('Something else', { [AUDIT_MARKER.field]: AUDIT_MARKER.value } as never);
    const line = JSON.parse(String(stderr.mock.calls.at(-1)?.[0]));
    expect(line).not.toHaveProperty(AUDIT_MARKER.field);
    expect(line.droppedKeys).toBe(AUDIT_MARKER.field);
  });
});

describe('the local audit file', () => {
  it('holds the same lines as stdout, in order, readable by its owner only', async () => {
    const handler = endpoint(async () => json(200, {}));
    await handler(getRequest as never, context);
    await handler(getRequest as never, { ...context, awsRequestId: 'fn-10' });
    const onStdout = written().filter((line) => line.includes(`"${AUDIT_MARKER.field}":"${AUDIT_MARKER.value}"`));
    expect(onStdout).toHaveLength(4);
    expect(readFileSync(auditFile, 'utf8')).toBe(onStdout.join(''));
    expect(statSync(auditFile).mode & 0o777).toBe(0o600);
  });

  it('starts a new file when the file is deleted while it is open', () => {
    const path = join(dir, 'deleted.jsonl');
    appendAuditLine(path, JSON.stringify(auditRecord({ requestId: 'before' })));
    rmSync(path);
    appendAuditLine(path, JSON.stringify(auditRecord({ requestId: 'after' })));
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line).requestId)).toEqual(['after']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('is LOCAL_AUDIT_FILE, else audit.jsonl in the state folder, else none (AWS)', () => {
    expect(localAuditFileOf({ LOCAL_AUDIT_FILE: '/x/a.jsonl', LOCAL_STATE_DIR: '/y' })).toBe('/x/a.jsonl');
    expect(localAuditFileOf({ LOCAL_STATE_DIR: '/y' })).toBe('/y/audit.jsonl');
    expect(localAuditFileOf({})).toBeUndefined();
  });
});
