import { randomUUID } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conditionalPut } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { s3 } from '#lib/aws/s3';
import { VersionConflict } from '#lib/concurrency';
import { bucketName, tableName } from '#lib/config/resources';
import { traced } from '#lib/observability/tracer';
import { daemonOf, traceContextOf } from '#lib/observability/xray';

/*
 * lib/observability/tracer.ts against a real UDP socket as the X-Ray daemon and the real SDK clients
 * of lib/aws/ on the test stack's emulators, with the variables Lambda sets per invocation.
 */

const TRACE_ID = '1-6740a0b1-0123456789abcdef01234567';
const PARENT_ID = '53995c3f42cd8ad8';
const header = (sampled: 0 | 1) => `Root=${TRACE_ID};Parent=${PARENT_ID};Sampled=${sampled};Lineage=a87bd80c:0`;

let daemon: Socket;
let daemonAddress: string;
let datagrams: string[] = [];
let waiting: (() => void)[] = [];

/** The next `count` datagrams the daemon receives (the ones received since the last call included). */
const received = async (count: number) => {
  while (datagrams.length < count) await new Promise<void>((resolve) => waiting.push(resolve));
  const taken = datagrams.slice(0, count);
  datagrams = datagrams.slice(count);
  return taken;
};
const subsegmentOf = (datagram: string) => {
  const [protocol, document, ...rest] = datagram.split('\n');
  expect(protocol).toBe('{"format":"json","version":1}');
  expect(rest).toEqual([]);
  return JSON.parse(document!);
};

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (message) => {
    datagrams.push(message.toString('utf8'));
    for (const wake of waiting.splice(0)) wake();
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  daemonAddress = `127.0.0.1:${(daemon.address() as AddressInfo).port}`;
});
afterAll(() => daemon.close());
beforeEach(() => {
  datagrams = [];
  waiting = [];
  process.env._X_AMZN_TRACE_ID = header(1);
  process.env.AWS_XRAY_DAEMON_ADDRESS = daemonAddress;
});
afterEach(() => {
  delete process.env._X_AMZN_TRACE_ID;
  delete process.env.AWS_XRAY_DAEMON_ADDRESS;
  delete process.env.POWERTOOLS_TRACE_ENABLED;
});

describe('traced SDK clients in a sampled Lambda invocation', () => {
  it('send one subsegment per call, under the function segment, with the allow-listed fields only', async () => {
    const pk = `CLIENT#trace-${randomUUID()}`;
    const item = { pk, sk: 'REQUEST#req-7f3a', patientName: 'Zebulon Quartermaine', memberId: 'MBR-990017' };
    const before = Date.now() / 1000;
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: item }));
    await dynamo.send(new GetCommand({ TableName: tableName(), Key: { pk, sk: item.sk } }));
    const after = Date.now() / 1000;

    const [put, get] = (await received(2)).map(subsegmentOf);
    expect(put).toMatchObject({
      type: 'subsegment',
      trace_id: TRACE_ID,
      parent_id: PARENT_ID,
      name: 'DynamoDB',
      namespace: 'aws',
      aws: { operation: 'PutItem', region: 'us-east-1', retries: 0, table_name: tableName() },
      http: { response: { status: 200 } },
    });
    expect(put.id).toMatch(/^[0-9a-f]{16}$/);
    expect(put.aws.request_id).toEqual(expect.any(String));
    expect(get).toMatchObject({ name: 'DynamoDB', aws: { operation: 'GetItem' }, http: { response: { status: 200 } } });
    expect(get.id).not.toBe(put.id);
    expect(before).toBeLessThanOrEqual(put.start_time);
    expect(put.start_time).toBeLessThanOrEqual(put.end_time);
    expect(put.end_time).toBeLessThanOrEqual(get.start_time);
    expect(get.end_time).toBeLessThanOrEqual(after);
    for (const subsegment of [put, get]) {
      expect(subsegment).not.toHaveProperty('error');
      expect(subsegment).not.toHaveProperty('fault');
      expect(subsegment).not.toHaveProperty('throttle');
    }
    const sent = JSON.stringify([put, get]);
    for (const value of ['trace-', 'REQUEST#', 'Zebulon', 'MBR-990017', 'patientName'])
      expect(sent).not.toContain(value);
  });

  it('sends a subsegment once the call has answered, and each of calls made together in a datagram of its own', async () => {
    const pk = `CLIENT#trace-${randomUUID()}`;
    await dynamo.send(new GetCommand({ TableName: tableName(), Key: { pk, sk: 'S' } }));
    // Built and sent after this turn of the event loop, in which the caller already has its answer.
    expect(datagrams).toEqual([]);
    expect((await received(1)).map(subsegmentOf)).toMatchObject([{ aws: { operation: 'GetItem' } }]);

    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        dynamo.send(new GetCommand({ TableName: tableName(), Key: { pk, sk: `S${i}` } })),
      ),
    );
    const together = (await received(5)).map(subsegmentOf);
    expect(together.map((subsegment) => subsegment.aws.operation)).toEqual(Array(5).fill('GetItem'));
    expect(new Set(together.map((subsegment) => subsegment.id)).size).toBe(5);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(datagrams).toEqual([]);
  });

  it('flags a refused call as an error with its exception type, never its message', async () => {
    const pk = `CLIENT#trace-${randomUUID()}`;
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: { pk, sk: 'V', note: 'Dr. Ignatius Blume' } }));
    await expect(
      conditionalPut({ pk, sk: 'V', note: 'Dr. Ignatius Blume' }, 'attribute_not_exists(pk)'),
    ).rejects.toBeInstanceOf(VersionConflict);

    const [, refused] = (await received(2)).map(subsegmentOf);
    expect(refused).toMatchObject({
      name: 'DynamoDB',
      aws: { operation: 'PutItem', table_name: tableName() },
      http: { response: { status: 400 } },
      error: true,
      cause: { exceptions: [{ type: 'ConditionalCheckFailedException', remote: true }] },
    });
    expect(refused).not.toHaveProperty('fault');
    expect(refused).not.toHaveProperty('throttle');
    const sent = JSON.stringify(refused);
    for (const value of ['Ignatius', 'trace-', 'conditional request failed', 'attribute_not_exists']) {
      expect(sent).not.toContain(value);
    }
  });

  it('records the bucket of an S3 call, never the object key or its bytes', async () => {
    const key = `attachments/client-trace-${randomUUID()}/report.pdf`;
    await s3.send(new PutObjectCommand({ Bucket: bucketName(), Key: key, Body: 'Diagnosis: Xanthelasma' }));
    await (await s3.send(new GetObjectCommand({ Bucket: bucketName(), Key: key }))).Body!.transformToString();

    const [put, get] = (await received(2)).map(subsegmentOf);
    expect(put).toMatchObject({ name: 'S3', aws: { operation: 'PutObject', bucket_name: bucketName() } });
    expect(get).toMatchObject({ name: 'S3', aws: { operation: 'GetObject', bucket_name: bucketName() } });
    const sent = JSON.stringify([put, get]);
    for (const value of ['client-trace-', 'report.pdf', 'Xanthelasma']) expect(sent).not.toContain(value);
  });

  describe('against an endpoint that answers with an error', () => {
    let server: Server;
    let endpoint: string;
    let answer: { status: number; type: string };
    const headersSeen: IncomingHttpHeaders[] = [];

    beforeAll(async () => {
      server = createServer((request, response) => {
        headersSeen.push(request.headers);
        request.resume().on('end', () => {
          response.writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.0' });
          response.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${answer.type}`, message: 'x' }));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const getItem = (maxAttempts: number) =>
      traced(new DynamoDBClient({ endpoint, maxAttempts })).send(
        new GetItemCommand({ TableName: 'Requests', Key: { pk: { S: 'CLIENT#c-1' } } }),
      );

    it('flags a 5xx as a fault, counts the retries and passes the trace on under the subsegment', async () => {
      answer = { status: 500, type: 'InternalServerError' };
      headersSeen.length = 0;
      await expect(getItem(2)).rejects.toMatchObject({ name: 'InternalServerError' });
      const [failed] = (await received(1)).map(subsegmentOf);
      expect(failed).toMatchObject({
        aws: { operation: 'GetItem', retries: 1, table_name: 'Requests' },
        http: { response: { status: 500 } },
        fault: true,
      });
      expect(failed).not.toHaveProperty('error');
      expect(headersSeen).toHaveLength(2);
      for (const seen of headersSeen) {
        expect(seen['x-amzn-trace-id']).toBe(`Root=${TRACE_ID};Parent=${failed.id};Sampled=1;Lineage=a87bd80c:0`);
      }
    });

    it('flags a 429 as an error and a throttle', async () => {
      answer = { status: 429, type: 'ThrottlingException' };
      await expect(getItem(1)).rejects.toMatchObject({ name: 'ThrottlingException' });
      const [throttled] = (await received(1)).map(subsegmentOf);
      expect(throttled).toMatchObject({ http: { response: { status: 429 } }, error: true, throttle: true });
      expect(throttled).not.toHaveProperty('fault');
    });

    it('flags a call that got no answer as a fault, without a status', async () => {
      const closed = traced(new DynamoDBClient({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1 }));
      await expect(
        closed.send(new GetItemCommand({ TableName: 'Requests', Key: { pk: { S: 'x' } } })),
      ).rejects.toThrow();
      const [failed] = (await received(1)).map(subsegmentOf);
      expect(failed).toMatchObject({ name: 'DynamoDB', fault: true });
      expect(failed).not.toHaveProperty('http');
    });
  });
});

describe('nothing is sent', () => {
  /** Runs `call` untraced, then one sampled call as a marker: the daemon must receive the marker only. */
  const expectOnlyTheMarker = async (call: () => Promise<unknown>) => {
    await call();
    process.env._X_AMZN_TRACE_ID = header(1);
    process.env.AWS_XRAY_DAEMON_ADDRESS = daemonAddress;
    delete process.env.POWERTOOLS_TRACE_ENABLED;
    await dynamo.send(new GetCommand({ TableName: tableName(), Key: { pk: 'CLIENT#marker', sk: 'M' } }));
    const [marker] = (await received(1)).map(subsegmentOf);
    expect(marker.aws.operation).toBe('GetItem');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(datagrams).toEqual([]);
  };
  const put = () =>
    dynamo.send(new PutCommand({ TableName: tableName(), Item: { pk: `CLIENT#quiet-${randomUUID()}`, sk: 'Q' } }));

  it('when the invocation is not sampled (Sampled=0)', async () => {
    process.env._X_AMZN_TRACE_ID = header(0);
    await expectOnlyTheMarker(put);
  });

  it('outside Lambda: no trace header, or no daemon address', async () => {
    delete process.env._X_AMZN_TRACE_ID;
    await expectOnlyTheMarker(put);
    delete process.env.AWS_XRAY_DAEMON_ADDRESS;
    await expectOnlyTheMarker(put);
  });

  it('when tracing is switched off (POWERTOOLS_TRACE_ENABLED=false)', async () => {
    process.env.POWERTOOLS_TRACE_ENABLED = 'false';
    await expectOnlyTheMarker(put);
  });

  it('and a call never fails for it: an unreachable daemon costs the subsegment only', async () => {
    process.env.AWS_XRAY_DAEMON_ADDRESS = '127.0.0.1:0';
    await expect(put()).resolves.toBeDefined();
    process.env.AWS_XRAY_DAEMON_ADDRESS = 'not an address';
    await expect(put()).resolves.toBeDefined();
  });
});

describe('the formats', () => {
  it('reads the trace header as the X-Ray SDK does: Root, Parent and Sampled required, other fields passed on', () => {
    expect(traceContextOf(header(1))).toEqual({
      root: TRACE_ID,
      parent: PARENT_ID,
      sampled: true,
      extra: ';Lineage=a87bd80c:0',
    });
    expect(traceContextOf(`Root=${TRACE_ID}`)).toBeUndefined();
    expect(traceContextOf(`Root=${TRACE_ID};Parent=xyz;Sampled=1`)).toBeUndefined();
    expect(traceContextOf('')).toBeUndefined();
  });

  it('reads the daemon address in both of its forms', () => {
    expect(daemonOf('169.254.79.129:2000')).toEqual({ host: '169.254.79.129', port: 2000 });
    expect(daemonOf('tcp:127.0.0.1:2000 udp:127.0.0.2:2001')).toEqual({ host: '127.0.0.2', port: 2001 });
    expect(daemonOf('127.0.0.1')).toBeUndefined();
    expect(daemonOf('127.0.0.1:http')).toBeUndefined();
  });
});
