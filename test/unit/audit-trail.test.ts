import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { fileAuditSink } from '#lib/audit/file-audit-sink';
import { auditSinkFromEnvironment } from '#lib/audit/sink';
import { auditTrail } from '#lib/http/audit';
import { json } from '#lib/http/response';
import { routes } from '#lib/routes';
import { auditEvent } from '#test/support/fixtures';

const dir = mkdtempSync(join(tmpdir(), 'audit-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

describe('the local file sink', () => {
  it('appends one JSON line per event to a file only its owner may read, concurrent writes whole', async () => {
    const path = join(dir, 'audit.jsonl');
    const sink = fileAuditSink(path);
    await sink.write(auditEvent());
    await Promise.all(Array.from({ length: 50 }, (_, i) => sink.write(auditEvent({ requestId: `gw-${i}` }))));
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(51);
    expect(JSON.parse(lines[0]!)).toEqual(auditEvent());
    expect(new Set(lines.slice(1).map((line) => JSON.parse(line).requestId)).size).toBe(50);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('starts a new file when the file is deleted while the sink holds it open', async () => {
    const path = join(dir, 'deleted.jsonl');
    const sink = fileAuditSink(path);
    await sink.write(auditEvent({ requestId: 'before' }));
    rmSync(path);
    await Promise.all([
      sink.write(auditEvent({ requestId: 'after-1' })),
      sink.write(auditEvent({ requestId: 'after-2' })),
    ]);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line).requestId).sort()).toEqual(['after-1', 'after-2']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});

describe('sink configuration', () => {
  it('chooses the log group when AUDIT_LOG_GROUP is set, else the state folder’s audit.jsonl, else none', async () => {
    const cloud = await auditSinkFromEnvironment({ AUDIT_LOG_GROUP: 'audit', LOCAL_STATE_DIR: dir });
    expect(cloud).toBeDefined();
    const local = await auditSinkFromEnvironment({ LOCAL_STATE_DIR: dir });
    await local!.write(auditEvent({ requestId: 'from-env' }));
    expect(readFileSync(join(dir, 'audit.jsonl'), 'utf8')).toContain('"requestId":"from-env"');
    expect(await auditSinkFromEnvironment({})).toBeUndefined();
  });
});

describe('a sink that fails', () => {
  const route = routes.find((candidate) => candidate.handler === 'requests/get-request')!;
  const event = {
    httpMethod: route.method,
    resource: route.path,
    pathParameters: { externalId: 'REQ-1' },
    requestContext: { requestId: 'gw-9', authorizer: { clientId: 'client-1', keyId: 'key-1' } },
  };
  const context = { awsRequestId: 'fn-9' } as Context;

  it('does not fail the request: the whole event is logged as an error instead, ids only', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const failing = { write: async () => Promise.reject(new Error('AccessDenied: Quixotic')) };
    const handler = middy({ requestEnd: auditTrail(async () => failing) }).handler(async () =>
      json(200, { patient: { lastName: 'Quixotic' } }),
    );
    expect((await handler(event, context)).statusCode).toBe(200);
    const logged = stderr.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'error', message: 'Audit event not stored', errorName: 'Error' });
    expect(JSON.parse(logged[0].auditEvent)).toMatchObject({
      action: 'request.read',
      outcome: 200,
      clientId: 'client-1',
      keyId: 'key-1',
      requestId: 'gw-9',
      lambdaRequestId: 'fn-9',
      resource: { type: 'request', ids: { requestExternalId: 'REQ-1' } },
    });
    expect(JSON.stringify(logged)).not.toContain('Quixotic');
  });

  it('logs the event as an error when no sink is configured at all', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const handler = middy({ requestEnd: auditTrail(async () => undefined) }).handler(async () => json(200, {}));
    expect((await handler(event, context)).statusCode).toBe(200);
    expect(stderr.mock.calls.map(([line]) => JSON.parse(String(line)).message)).toEqual(['Audit event not stored']);
  });
});
