import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { uuidv7 } from '#lib/ids';
import { afterAttempt, newDelivery } from '#lib/webhooks/delivery-records';
import { dynamoWebhookStore } from '#lib/webhooks/dynamo-webhook-store';

/** What a test receiver got: one POST, as it arrived. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How the receiver answers the n-th request (0-based): a status and headers, or never. */
export type Answer = (n: number, request: Received) => { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Waits until `count` requests arrived (or fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A real HTTP server on loopback, recording every request. */
export const startReceiver = async (answer: Answer = () => ({ status: 204 })): Promise<Receiver> => {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      const reply = answer(received.length - 1, entry);
      if (reply === 'hang') return;
      response.writeHead(reply.status, reply.headers).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    waitFor: async (count, timeoutMs = 15_000) => {
      const until = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`${received.length} of ${count} deliveries arrived in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return received;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

/**
 * The Standard Webhooks check written from the specification alone (not the standardwebhooks
 * package): HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}` under the base64-decoded
 * secret after `whsec_`, base64, compared with each `v1,` signature of the header. Which ones match.
 */
export const matchingSignatures = (secret: string, { headers, body }: Pick<Received, 'headers' | 'body'>) => {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`;
  const expected = createHmac('sha256', key).update(signed).digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((entry) => {
      const [version, signature] = entry.split(',');
      const given = Buffer.from(signature ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
};

/** A delivery of a test event to the subscription, stored as delivered (no receiver needed). */
export const storedDelivery = async (clientId: string, webhookId: string) => {
  const now = new Date();
  const event = {
    id: `evt_${uuidv7()}`,
    type: 'webhook.test' as const,
    clientId,
    occurredAt: now.toISOString(),
    data: { webhookId },
  };
  const delivery = afterAttempt(
    newDelivery(event, { clientId, webhookId, organizationId: null }, 'test', now),
    { at: now.toISOString(), durationMs: 3, responseStatus: 200, error: null },
    now,
  );
  await dynamoWebhookStore.createDelivery(delivery);
  return delivery;
};
