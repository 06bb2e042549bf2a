import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { boundDynaliteMemory } from './dynalite-memory.ts';
import { withTransactions } from './dynalite-transactions.ts';

/** Embedded stand-ins for AWS services, bound to loopback only. */
export interface Emulator {
  endpoint: string;
  close(): Promise<void>;
}

/** How long the local DynamoDB keeps an idle connection open for the SDK's next request. */
const DYNAMO_KEEP_ALIVE_MS = 120_000;

export const startDynalite = async (options: { path?: string }): Promise<Emulator> => {
  // Otherwise every Query and Scan leaves its storage iterator open and each small entry keeps pool slabs:
  // memory grows by KBs per request, not by what is stored.
  boundDynaliteMemory();
  const server = withTransactions(
    dynalite({
      ...(options.path ? { path: options.path } : {}),
      createTableMs: 0,
      deleteTableMs: 0,
      updateTableMs: 0,
    }),
  );
  // Node's server closes an idle keep-alive connection after 5 s; a client that reuses it at that moment gets
  // ECONNRESET, which the SDK names TimeoutError. DynamoDB keeps connections far longer: so does the stand-in.
  server.keepAliveTimeout = DYNAMO_KEEP_ALIVE_MS;
  server.headersTimeout = DYNAMO_KEEP_ALIVE_MS + 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
};

export interface S3Emulator extends Emulator {
  server: S3rver;
}

export const startS3rver = async (options: { directory: string; buckets: string[] }): Promise<S3Emulator> => {
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: options.directory,
    configureBuckets: options.buckets.map((name) => ({ name })),
  });
  const { port } = await server.run();
  return { endpoint: `http://127.0.0.1:${port}`, server, close: () => server.close() };
};
