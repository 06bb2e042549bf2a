import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bundle, Parameters } from '@medplum/fhirtypes';

/*
 * What the subscription tests need: a real HTTP receiver on loopback that records every notification the
 * payer posts (by path, with its headers) and answers each path with the status a test chose, and PAS
 * Subscriptions written after the IG's example (Examples.fsh, PASSubscriptionExample) and the backport.
 */
const BACKPORT = 'http://hl7.org/fhir/uv/subscriptions-backport/StructureDefinition/';
export const PAS_TOPIC = 'http://hl7.org/fhir/us/davinci-pas/SubscriptionTopic/PASSubscriptionTopic';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Bundle;
}

export async function notificationReceiver() {
  const received: Received[] = [];
  const statuses = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(statuses.get(path) ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const at = (path: string) => received.filter((notification) => notification.path === path);
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    at,
    /** Answer this path with this status from now on. */
    answer: (path: string, status: number) => void statuses.set(path, status),
    /** The notifications at the path once `count` of them (of that type, if given) have arrived. */
    async waitFor(path: string, count: number, type?: string, timeoutMs = 8000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = at(path).filter((notification) => !type || statusOf(notification.body).type === type);
        if (found.length >= count) return found;
        if (Date.now() > deadline)
          throw new Error(`${found.length} of ${count} ${type ?? ''} notifications at ${path}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The SubscriptionStatus of a notification (its first entry), as name → value. */
export function statusOf(notification: Bundle) {
  const parameters = notification.entry?.[0]?.resource as Parameters;
  const value = (name: string) => parameters.parameter?.find((parameter) => parameter.name === name);
  const events = (parameters.parameter ?? []).filter((parameter) => parameter.name === 'notification-event');
  return {
    subscription: value('subscription')?.valueReference?.reference,
    topic: value('topic')?.valueCanonical,
    status: value('status')?.valueCode,
    type: value('type')?.valueCode,
    eventsSinceStart: value('events-since-subscription-start')?.valueString,
    events: events.map((event) => {
      const part = (name: string) => event.part?.find((found) => found.name === name);
      return { number: part('event-number')?.valueString, focus: part('focus')?.valueReference?.reference };
    }),
  };
}

export interface SubscriptionOptions {
  endpoint: string;
  orgIdentifier: string;
  secret?: string;
  heartbeatSeconds?: number;
  end?: string;
  id?: string;
}

/** A PAS Subscription: the topic, the org-identifier filter, rest-hook, FHIR JSON, full-resource content. */
export const pasSubscription = (options: SubscriptionOptions) => ({
  resourceType: 'Subscription',
  ...(options.id ? { id: options.id } : {}),
  status: 'requested',
  end: options.end ?? new Date(Date.now() + 7 * 86_400_000).toISOString(),
  reason: 'Pended prior authorization results for our organization.',
  criteria: PAS_TOPIC,
  _criteria: {
    extension: [{ url: `${BACKPORT}backport-filter-criteria`, valueString: `org-identifier=${options.orgIdentifier}` }],
  },
  channel: {
    extension: [
      ...(options.heartbeatSeconds
        ? [{ url: `${BACKPORT}backport-heartbeat-period`, valueUnsignedInt: options.heartbeatSeconds }]
        : []),
    ],
    type: 'rest-hook',
    endpoint: options.endpoint,
    payload: 'application/fhir+json',
    _payload: { extension: [{ url: `${BACKPORT}backport-payload-content`, valueCode: 'full-resource' }] },
    header: [`Authorization: Bearer ${options.secret ?? 'a-channel-secret'}`],
  },
});
