/**
 * `npm run bench:upload`: what verifying a presigned upload costs as the file grows, measured on the
 * embedded emulators (dynalite, s3rver) through the real adapters. For 1, 10 and 100 MiB (BENCH_SIZES_MIB),
 * the time of the verifier's `verifyObject` (the S3 event handler's work: record, object, verdict) and
 * the bytes it reads from the store, as ratios to the same at 1 MiB (the floor, measured in the same run),
 * on two stores:
 * - `stand-in`: s3rver as the local stack uses it. It neither checks nor keeps checksums, so the
 *   adapter vouches for none and the verifier streams and hashes the whole object: linear in size.
 * - `s3`: the same emulator with S3's checksum behaviour (test/support/s3-as-on-aws.ts: a PUT is held to
 *   its x-amz-checksum-sha256 and HeadObject reports it), i.e. the path the verifier takes on AWS:
 *   HeadObject, then the first SNIFF_BYTES for the type check.
 * Each round verifies a pending record (reset between rounds, outside the timing); the object is
 * uploaded once per size and store, outside the timing. Medians; results: bench/results/upload-verification.json.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { startDynalite, startS3rver } from '#local/emulators';
import { ensureTable, localCredentials } from '#local/table';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SIZES_MIB = (process.env.BENCH_SIZES_MIB ?? '1,10,100').split(',').map(Number);
const MIB = 1024 * 1024;
const TABLE = 'upload-verification-bench';
const BUCKET = 'upload-verification-bench';

const scratch = mkdtempSync(join(tmpdir(), 'upload-verification-'));
const db = await startDynalite({});
const s3rver = await startS3rver({ directory: join(scratch, 's3'), buckets: [BUCKET] });
Object.assign(process.env, {
  ...localCredentials,
  TABLE_NAME: TABLE,
  BUCKET_NAME: BUCKET,
  AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
  AWS_ENDPOINT_URL_S3: s3rver.endpoint,
  S3_FORCE_PATH_STYLE: 'true',
  S3_VERIFIES_CHECKSUMS: 'false',
  LOG_LEVEL: 'error',
});
await ensureTable(db.endpoint, TABLE);

// The SDK clients read the endpoints above when first imported.
const { attachmentService } = await import('#lib/attachments/attachments');
const { dynamoAttachmentStore } = await import('#lib/attachments/dynamo-attachment-store');
const { s3ObjectStorage } = await import('#lib/attachments/s3-object-storage');
const { dynamoRequestStore } = await import('#lib/requests/dynamo-request-store');
const { countingReads, s3AsOnAws } = await import('#test/support/s3-as-on-aws');

const clientId = 'bench-client';
const externalId = 'BENCH-1';
const at = new Date().toISOString();
await dynamoRequestStore.create({
  clientId,
  externalId,
  document: {},
  authorization: { status: 'not_submitted', number: null, decisionDate: null, lastCheckedAt: null },
  version: 1,
  createdAt: at,
  updatedAt: at,
});

const onAws = s3AsOnAws();
const standIn = countingReads({ ...s3ObjectStorage, verifiesChecksums: false });
const stores = {
  'stand-in': {
    ...standIn,
    put: async (upload: { url: string; headers: Record<string, string> }, bytes: Uint8Array) =>
      (await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes })).status,
  },
  s3: { ...onAws, put: onAws.putPresigned },
};

const median = (samples: number[]) => samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;

const rows: Array<{ store: string; sizeMiB: number; verifyMs: number; bytesRead: number }> = [];
for (const sizeMiB of SIZES_MIB) {
  const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(sizeMiB * MIB - 9)]);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  for (const [name, store] of Object.entries(stores)) {
    const service = attachmentService({
      requests: dynamoRequestStore,
      store: dynamoAttachmentStore,
      objects: store.objects,
      quotas: dynamoStorageQuotas,
    });
    const { record, upload } = await service.requestUpload(clientId, externalId, {
      fileName: 'bench.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256,
    });
    const status = await store.put(upload, bytes);
    if (status !== 200) throw new Error(`upload refused: ${status}`);
    const times: number[] = [];
    const reads: number[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      const current = (await dynamoAttachmentStore.get(clientId, externalId, record.attachmentId))!;
      if (current.status !== 'pending') {
        await dynamoAttachmentStore.update({
          ...current,
          status: 'pending',
          expiresAt: record.expiresAt,
          version: current.version + 1,
        });
      }
      store.resetCount();
      const start = performance.now();
      const outcome = await service.verifyObject(record.objectKey);
      const elapsed = performance.now() - start;
      if (outcome !== 'available') throw new Error(`${name} ${sizeMiB} MiB: ${outcome}`);
      // Round 0 warms the code path and connections.
      if (round > 0) {
        times.push(elapsed);
        reads.push(store.bytesRead());
      }
    }
    rows.push({ store: name, sizeMiB, verifyMs: median(times), bytesRead: median(reads) });
    await s3ObjectStorage.deleteAllVersions(record.objectKey);
  }
}

const results = rows.map((row) => {
  const floor = rows.find((r) => r.store === row.store && r.sizeMiB === SIZES_MIB[0])!;
  return { ...row, timeRatio: row.verifyMs / floor.verifyMs, bytesReadRatio: row.bytesRead / floor.bytesRead };
});
for (const r of results) {
  process.stdout.write(
    `${r.store.padEnd(9)} ${String(r.sizeMiB).padStart(4)} MiB: verify ${r.verifyMs.toFixed(1).padStart(7)} ms ` +
      `(${r.timeRatio.toFixed(2).padStart(6)}× ${SIZES_MIB[0]} MiB), read ${String(r.bytesRead).padStart(10)} B ` +
      `(${r.bytesReadRatio.toFixed(2).padStart(6)}×)\n`,
  );
}
const largest = SIZES_MIB.at(-1)!;
const s3Largest = results.find((r) => r.store === 's3' && r.sizeMiB === largest)!;
const standInLargest = results.find((r) => r.store === 'stand-in' && r.sizeMiB === largest)!;
const gib = {
  s3: { verifyMs: s3Largest.verifyMs, bytesRead: s3Largest.bytesRead },
  standIn: {
    verifyMs: (standInLargest.verifyMs * 1024) / largest,
    bytesRead: 1024 * MIB,
  },
};
process.stdout.write(
  `1 GiB, extrapolated: s3 ${gib.s3.verifyMs.toFixed(1)} ms and ${gib.s3.bytesRead} B read (flat); ` +
    `stand-in ≈ ${(gib.standIn.verifyMs / 1000).toFixed(1)} s and ${gib.standIn.bytesRead} B (linear)\n`,
);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/upload-verification.json',
  JSON.stringify(
    { at: new Date().toISOString(), node: process.version, rounds: ROUNDS, rows: results, oneGiBExtrapolated: gib },
    null,
    2,
  ),
);
process.stdout.write('results: bench/results/upload-verification.json\n');
await Promise.all([db.close(), s3rver.close()]);
rmSync(scratch, { recursive: true, force: true });
