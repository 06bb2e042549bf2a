import type { S3Event } from 'aws-lambda';
import type { EventFunction } from '#lib/routes/event-functions';
import type { S3Emulator } from './emulators.ts';
import { type HandlerLoader, lambdaContext } from './gateway/invoke.ts';

/** S3 URL-encodes object keys in event notifications (spaces as "+"); s3rver sends them raw. */
const s3EventKey = (key: string) => encodeURIComponent(key).replace(/%2F/g, '/').replace(/%20/g, '+');

/** The records of an s3rver event that a function's ObjectCreated trigger on the bucket matches, keys as S3 sends them. */
const recordsFor = (fn: EventFunction, event: S3Event, bucketName: string) => {
  const { prefix = '', suffix = '' } = fn.trigger.s3ObjectCreated;
  return event.Records.filter(
    (r) =>
      r.eventName.startsWith('ObjectCreated:') &&
      r.s3.bucket.name === bucketName &&
      r.s3.object.key.startsWith(prefix) &&
      r.s3.object.key.endsWith(suffix),
  ).map((r) => ({ ...r, s3: { ...r.s3, object: { ...r.s3.object, key: s3EventKey(r.s3.object.key) } } }));
};

/**
 * S3 event notifications: s3rver's 'event' → the same handlers the CDK stack subscribes, invoked
 * asynchronously as Lambda does (a failure is logged; AWS would retry it, then dead-letter it).
 * Returns the invocations under way, which closing the stack waits for.
 */
export function relayS3Events(
  s3: S3Emulator,
  bucketName: string,
  functions: readonly EventFunction[],
  loadHandler: HandlerLoader,
): Set<Promise<unknown>> {
  const invocations = new Set<Promise<unknown>>();
  s3.server.on('event', (event: S3Event) => {
    for (const fn of functions) {
      const records = recordsFor(fn, event, bucketName);
      if (records.length === 0) continue;
      const invocation = loadHandler(fn.handler)
        .then((handler) => handler({ Records: records }, lambdaContext(fn.name)))
        .catch((error: Error) => process.stderr.write(`local ${fn.name}: ${error.stack ?? String(error)}\n`))
        .finally(() => invocations.delete(invocation));
      invocations.add(invocation);
    }
  });
  return invocations;
}
