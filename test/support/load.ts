import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { minimalRequest } from './fixtures.ts';

/**
 * Load without loss: several clients, each with several concurrent callers, mix creates, merge
 * patches, replaces, attachment uploads and reads against a running stack for a fixed time, while
 * probing each other's ids. Then, with the stack quiet, every acknowledged write must be stored
 * exactly as acknowledged and no client may have seen another's data. Used by `npm run load`
 * (bench/load.ts) and, briefly, by the integration tests. Provisioning goes straight to the table,
 * so the caller's environment must point at the stack's DynamoDB (as the local stack sets it).
 */
export interface LoadOptions {
  baseUrl: string;
  durationMs: number;
  /** Clients (tenants), each with its own API key. */
  clients?: number;
  /** Concurrent callers per client. */
  callersPerClient?: number;
  /** Cross-client probes of the final check, per pair of clients. */
  finalProbesPerPair?: number;
  /** Ends the timed load early once this many calls were made (benchmarks that compare by call count). */
  maxRequests?: number;
}

export type Operation = 'create' | 'patch' | 'replace' | 'upload' | 'read' | 'listAttachments' | 'probe';

export interface LoadResult {
  durationMs: number;
  clients: number;
  callers: number;
  /** Calls made during the timed load (the final checks come on top: verificationRequests). */
  requests: number;
  verificationRequests: number;
  byOperation: Record<Operation, Record<string, number>>;
  acknowledged: { creates: number; patches: number; replaces: number; uploads: number };
  /** Writes the API refused (409 on a contended merge patch, 412 on a stale If-Match): not acknowledged. */
  refused: Record<string, number>;
  /** Statuses no operation expects (by status), and failures to get any answer. */
  errors: Record<string, number>;
  serverErrors: number;
  lostWrites: Array<{ client: number; id: string; problem: string }>;
  leaks: Array<{ client: number; otherClient: number; id: string; status: number; during: string }>;
  verified: { requests: number; attachments: number; crossClientProbes: number };
}

export type Verification = Pick<LoadResult, 'lostWrites' | 'leaks' | 'verified'>;

export interface LoadRun {
  result: LoadResult;
  /** The final checks again, e.g. after tampering with what was acknowledged behind the callers' backs. */
  verify(): Promise<Verification>;
  /** Each client's key and acknowledged requests (kept out of the result, which is written to disk). */
  clients: Array<{ apiKey: string; acknowledged: Array<{ id: string; attachmentIds: string[] }> }>;
}

interface Ack {
  version: number;
  body: unknown;
}

interface Tracked {
  id: string;
  client: number;
  /** The acknowledged write with the highest version, and every acknowledged version. */
  latest?: Ack;
  versions: Set<number>;
  uploads: Map<string, { sha256: string; size: number; fileName: string }>;
  uploadsStarted: number;
  /** A write whose outcome is unknown (5xx or no answer): the final state cannot be held to the acks alone. */
  indeterminate: boolean;
}

interface Client {
  index: number;
  apiKey: string;
  /** Every patient in this client's requests carries this last name: another client's marker in a response is a leak. */
  marker: string;
  requests: Tracked[];
}

const WEIGHTS: Array<[Operation, number]> = [
  ['create', 15],
  ['patch', 25],
  ['replace', 15],
  ['upload', 10],
  ['read', 22],
  ['listAttachments', 8],
  ['probe', 5],
];
const TOTAL_WEIGHT = WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);
const MAX_UPLOADS_PER_REQUEST = 20;
const v1 = '/api/external/v1/Requests';
const v11 = '/api/external/v1.1/Requests';

const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

const chooseOperation = (): Operation => {
  let roll = Math.random() * TOTAL_WEIGHT;
  for (const [operation, weight] of WEIGHTS) {
    roll -= weight;
    if (roll < 0) return operation;
  }
  return 'read';
};

/** A valid PDF of a few KB: the signature the content checks look for, then random bytes. */
const pdf = () => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(1000 + Math.floor(Math.random() * 15_000))]);

const multipart = (fileName: string, bytes: Buffer) => {
  const boundary = `----load-${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/pdf\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
};

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export const runLoad = async (options: LoadOptions): Promise<LoadRun> => {
  const clientCount = options.clients ?? 4;
  const callersPerClient = options.callersPerClient ?? 3;
  const run = Date.now().toString(36);
  const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
  const { provisioning } = await import('#lib/tenancy/provisioning');
  const admin = provisioning(dynamoTenantStore);

  const clients: Client[] = [];
  for (let index = 0; index < clientCount; index++) {
    const { apiKey } = await admin.createClient(`load ${run} client ${index}`);
    clients.push({ index, apiKey, marker: `Load${run}Client${index}`, requests: [] });
  }

  const result: LoadResult = {
    durationMs: options.durationMs,
    clients: clientCount,
    callers: clientCount * callersPerClient,
    requests: 0,
    verificationRequests: 0,
    byOperation: Object.fromEntries(WEIGHTS.map(([operation]) => [operation, {}])) as LoadResult['byOperation'],
    acknowledged: { creates: 0, patches: 0, replaces: 0, uploads: 0 },
    refused: {},
    errors: {},
    serverErrors: 0,
    lostWrites: [],
    leaks: [],
    verified: { requests: 0, attachments: 0, crossClientProbes: 0 },
  };
  const count = (bucket: Record<string, number>, key: string) => {
    bucket[key] = (bucket[key] ?? 0) + 1;
  };

  const send = async (
    operation: Operation | 'verify',
    client: Client,
    method: string,
    path: string,
    body?: { json?: unknown; raw?: Buffer; contentType?: string },
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: any }> => {
    if (operation === 'verify') result.verificationRequests++;
    else result.requests++;
    try {
      const payload = body?.json !== undefined ? JSON.stringify(body.json) : body?.raw;
      const contentType = body?.contentType ?? (body?.json !== undefined ? 'application/json' : undefined);
      const res = await fetch(`${options.baseUrl}${path}`, {
        method,
        headers: { 'x-api-key': client.apiKey, ...(contentType ? { 'content-type': contentType } : {}), ...headers },
        ...(payload !== undefined ? { body: payload } : {}),
      });
      const text = await res.text();
      if (operation !== 'verify') count(result.byOperation[operation], String(res.status));
      if (res.status >= 500) result.serverErrors++;
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: res.status, body: parsed };
    } catch (error) {
      if (operation !== 'verify') count(result.byOperation[operation], 'no answer');
      count(result.errors, `no answer (${(error as Error).name})`);
      return { status: 0, body: undefined };
    }
  };

  /** Anything but the expected statuses is an error; a refusal is counted apart, and leaves no ack. */
  const expectStatus = (
    response: { status: number },
    expected: number[],
    refusals: number[] = [],
    tracked?: Tracked,
  ): boolean => {
    if (expected.includes(response.status)) return true;
    if (refusals.includes(response.status)) count(result.refused, String(response.status));
    else if (response.status !== 0) count(result.errors, String(response.status));
    if (tracked && (response.status === 0 || response.status >= 500)) tracked.indeterminate = true;
    return false;
  };

  const acknowledge = (tracked: Tracked, body: any, client: Client, during: string) => {
    if (body?.patient?.lastName !== client.marker) {
      result.leaks.push({ client: client.index, otherClient: -1, id: tracked.id, status: 200, during });
    }
    const version = Number(body?.version);
    if (tracked.versions.has(version)) {
      // Two acknowledged writes produced the same version: one of them was silently overwritten.
      result.lostWrites.push({
        client: client.index,
        id: tracked.id,
        problem: `version ${version} acknowledged twice`,
      });
    }
    tracked.versions.add(version);
    if (!tracked.latest || version > tracked.latest.version) tracked.latest = { version, body };
  };

  // Recent ids take most writes, so callers of one client contend on the same requests.
  const target = (client: Client) => (Math.random() < 0.5 ? pick(client.requests.slice(-4)) : pick(client.requests));

  const operations: Record<Operation, (client: Client, caller: string, sequence: number) => Promise<void>> = {
    create: async (client, caller, sequence) => {
      const id = `load-${run}-c${client.index}-${caller}-${sequence}`;
      const document = minimalRequest(id);
      const body = { ...document, patient: { ...document.patient, lastName: client.marker } };
      const tracked: Tracked = {
        id,
        client: client.index,
        versions: new Set(),
        uploads: new Map(),
        uploadsStarted: 0,
        indeterminate: false,
      };
      const res = await send('create', client, 'POST', v11, { json: body });
      if (res.status === 0 || res.status >= 500) {
        tracked.indeterminate = true;
        client.requests.push(tracked);
      }
      if (!expectStatus(res, [201])) return;
      result.acknowledged.creates++;
      acknowledge(tracked, res.body, client, 'create');
      client.requests.push(tracked);
    },
    patch: async (client, caller, sequence) => {
      const tracked = target(client);
      if (!tracked) return;
      const patch = { patient: { memberId: `P-${caller}-${sequence}` }, serviceTypeCode: sequence % 2 ? '1' : '2' };
      const res = await send('patch', client, 'PATCH', `${v1}/${tracked.id}`, {
        json: patch,
        contentType: 'application/merge-patch+json',
      });
      if (!expectStatus(res, [200], [409], tracked)) return;
      result.acknowledged.patches++;
      acknowledge(tracked, res.body, client, 'patch');
    },
    replace: async (client, caller, sequence) => {
      const tracked = target(client);
      if (!tracked) return;
      const document = minimalRequest(tracked.id);
      const body = {
        ...document,
        patient: { ...document.patient, lastName: client.marker, memberId: `R-${caller}-${sequence}` },
      };
      // Some replaces are conditional on the last version this client saw acknowledged: 412 when stale.
      const ifMatch: Record<string, string> =
        Math.random() < 0.3 && tracked.latest ? { 'if-match': `"${tracked.latest.version}"` } : {};
      const res = await send('replace', client, 'PUT', `${v11}/${tracked.id}`, { json: body }, ifMatch);
      if (!expectStatus(res, [200], [412], tracked)) return;
      result.acknowledged.replaces++;
      acknowledge(tracked, res.body, client, 'replace');
    },
    upload: async (client, caller, sequence) => {
      const tracked = pick(client.requests.filter((r) => r.uploadsStarted < MAX_UPLOADS_PER_REQUEST));
      if (!tracked) return;
      tracked.uploadsStarted++;
      const bytes = pdf();
      const fileName = `scan-${caller}-${sequence}.pdf`;
      const { body, contentType } = multipart(fileName, bytes);
      const res = await send('upload', client, 'POST', `${v11}/${tracked.id}/Attachments`, { raw: body, contentType });
      if (!expectStatus(res, [201], [], tracked)) return;
      result.acknowledged.uploads++;
      if (res.body?.sha256 !== sha256(bytes) || res.body?.size !== bytes.length) {
        result.lostWrites.push({
          client: client.index,
          id: tracked.id,
          problem: `upload ${fileName} acknowledged with other bytes`,
        });
      }
      tracked.uploads.set(res.body.attachmentId, { sha256: sha256(bytes), size: bytes.length, fileName });
    },
    read: async (client) => {
      const tracked = pick(client.requests);
      if (!tracked) return;
      const res = await send('read', client, 'GET', `${v11}/${tracked.id}`);
      if (!expectStatus(res, [200])) return;
      if (res.body?.externalId !== tracked.id || res.body?.patient?.lastName !== client.marker) {
        result.leaks.push({
          client: client.index,
          otherClient: -1,
          id: tracked.id,
          status: res.status,
          during: 'read',
        });
      }
    },
    listAttachments: async (client) => {
      const tracked = pick(client.requests);
      if (!tracked) return;
      const res = await send('listAttachments', client, 'GET', `${v11}/${tracked.id}/Attachments`);
      if (!expectStatus(res, [200])) return;
      for (const attachment of res.body?.attachments ?? []) {
        if (attachment.requestExternalId !== tracked.id) {
          result.leaks.push({ client: client.index, otherClient: -1, id: tracked.id, status: 200, during: 'list' });
        }
      }
    },
    probe: async (client, caller, sequence) => {
      const other = pick(clients.filter((c) => c !== client));
      const theirs = other && pick(other.requests);
      if (!other || !theirs) return;
      const attempts: Array<[string, string, Parameters<typeof send>[4]]> = [
        ['GET', `${v11}/${theirs.id}`, undefined],
        ['GET', `${v11}/${theirs.id}/Attachments`, undefined],
        [
          'PATCH',
          `${v1}/${theirs.id}`,
          { json: { patient: { memberId: `X-${caller}-${sequence}` } }, contentType: 'application/merge-patch+json' },
        ],
      ];
      const [method, path, body] = pick(attempts)!;
      const res = await send('probe', client, method, path, body);
      if (res.status !== 404) {
        if (res.status < 300)
          result.leaks.push({
            client: client.index,
            otherClient: other.index,
            id: theirs.id,
            status: res.status,
            during: `probe ${method}`,
          });
        else expectStatus(res, [404]);
      }
    },
  };

  const deadline = Date.now() + options.durationMs;
  const maxRequests = options.maxRequests ?? Number.POSITIVE_INFINITY;
  const caller = async (client: Client, name: string) => {
    for (let sequence = 0; Date.now() < deadline && result.requests < maxRequests; sequence++) {
      // Every caller starts its client with a request to work on.
      const operation = client.requests.length === 0 ? 'create' : chooseOperation();
      await operations[operation](client, name, sequence);
    }
  };
  const started = Date.now();
  await Promise.all(
    clients.flatMap((client) =>
      Array.from({ length: callersPerClient }, (_, n) => caller(client, `w${n}-${randomUUID().slice(0, 4)}`)),
    ),
  );
  result.durationMs = Date.now() - started;

  const verify = async (): Promise<Verification> => {
    const lostWrites: LoadResult['lostWrites'] = [];
    const leaks: LoadResult['leaks'] = [];
    const verified = { requests: 0, attachments: 0, crossClientProbes: 0 };
    for (const client of clients) {
      for (const tracked of client.requests) {
        const res = await send('verify', client, 'GET', `${v11}/${tracked.id}`);
        verified.requests++;
        if (!tracked.latest) {
          if (res.status !== 404 && res.status !== 200) count(result.errors, String(res.status));
          continue;
        }
        if (res.status !== 200) {
          lostWrites.push({ client: client.index, id: tracked.id, problem: `GET answered ${res.status}` });
          continue;
        }
        const stored = res.body as { version: number };
        if (
          tracked.indeterminate
            ? stored.version < tracked.latest.version
            : !isDeepStrictEqual(stored, tracked.latest.body)
        ) {
          lostWrites.push({
            client: client.index,
            id: tracked.id,
            problem: `stored version ${stored.version} differs from the last acknowledged, version ${tracked.latest.version}`,
          });
        }
        const list = await send('verify', client, 'GET', `${v11}/${tracked.id}/Attachments`);
        const listed = new Map<string, any>((list.body?.attachments ?? []).map((a: any) => [a.attachmentId, a]));
        for (const [attachmentId, upload] of tracked.uploads) {
          const attachment = listed.get(attachmentId);
          verified.attachments++;
          if (
            attachment?.status !== 'available' ||
            attachment.sha256 !== upload.sha256 ||
            attachment.size !== upload.size ||
            attachment.fileName !== upload.fileName
          ) {
            lostWrites.push({
              client: client.index,
              id: tracked.id,
              problem: `attachment ${attachmentId} not as acknowledged`,
            });
          }
        }
        const unacknowledged = [...listed.keys()].filter((attachmentId) => !tracked.uploads.has(attachmentId));
        if (unacknowledged.length > 0 && !tracked.indeterminate) {
          lostWrites.push({
            client: client.index,
            id: tracked.id,
            problem: `${unacknowledged.length} attachment(s) never acknowledged`,
          });
        }
      }
    }
    // And no client reaches another's requests, whatever it tries.
    const probesPerPair = options.finalProbesPerPair ?? 25;
    for (const client of clients) {
      for (const other of clients) {
        if (other === client) continue;
        for (const theirs of other.requests.slice(0, probesPerPair)) {
          for (const path of [`${v11}/${theirs.id}`, `${v11}/${theirs.id}/Attachments`]) {
            const res = await send('verify', client, 'GET', path);
            verified.crossClientProbes++;
            if (res.status !== 404) {
              leaks.push({
                client: client.index,
                otherClient: other.index,
                id: theirs.id,
                status: res.status,
                during: 'final probe',
              });
            }
          }
        }
      }
    }

    return { lostWrites, leaks, verified };
  };

  // The stack is quiet: every acknowledged write must read back exactly as acknowledged.
  const verification = await verify();
  result.lostWrites.push(...verification.lostWrites);
  result.leaks.push(...verification.leaks);
  result.verified = verification.verified;
  return {
    result,
    verify,
    clients: clients.map((client) => ({
      apiKey: client.apiKey,
      acknowledged: client.requests
        .filter((tracked) => tracked.latest)
        .map((tracked) => ({ id: tracked.id, attachmentIds: [...tracked.uploads.keys()] })),
    })),
  };
};

/** Lost writes, leaks and 5xx fail a run; refusals (409, 412) do not. */
export const loadFailures = (result: LoadResult): string[] => [
  ...(result.lostWrites.length ? [`${result.lostWrites.length} lost write(s)`] : []),
  ...(result.leaks.length ? [`${result.leaks.length} cross-client leak(s)`] : []),
  ...(result.serverErrors ? [`${result.serverErrors} 5xx answer(s)`] : []),
  ...(Object.keys(result.errors).length ? [`unexpected answers: ${JSON.stringify(result.errors)}`] : []),
];
