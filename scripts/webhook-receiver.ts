/**
 * A webhook receiver for a developer's machine: `npm run -s webhook-receiver -- [options]` listens on
 * loopback, prints each delivery (its headers and event) and whether its signature verifies, and
 * answers 204. The check is the standardwebhooks package's `verify` (signature and a timestamp within
 * five minutes): what a client's own receiver would do.
 *
 *   --port <n>        (default 4000, or WEBHOOK_RECEIVER_PORT; 0 picks a free one)
 *   --host <address>  (default 127.0.0.1)
 *   --secret <whsec_…> the subscription's secret (or WEBHOOK_SECRET); repeat it, or separate with commas,
 *                      to accept either of two while a rotation is under way. Without one: not checked.
 *   --status <n>      answer this status instead of 204 (e.g. 500, to watch the retries)
 *
 * Subscribe it (the local stack allows http and loopback):
 *   curl -s -X POST localhost:3000/api/external/v1.1/Webhooks -H "x-api-key: $KEY" \
 *     -H 'content-type: application/json' -d '{"url":"http://127.0.0.1:4000/","events":["authorization.status_changed"]}'
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';

export interface ReceiverOptions {
  port: number;
  host: string;
  secrets: string[];
  status: number;
}

/** Whether the delivery verifies with one of the secrets, and why not. */
export const verdictOf = (secrets: string[], headers: IncomingHttpHeaders, body: string): string => {
  if (secrets.length === 0) return 'signature not checked (no --secret or WEBHOOK_SECRET)';
  const flat = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(headers[name] ?? '')]),
  );
  let reason = '';
  for (const [i, secret] of secrets.entries()) {
    try {
      new Webhook(secret).verify(body, flat);
      return secrets.length > 1 ? `signature verified (secret ${i + 1})` : 'signature verified';
    } catch (error) {
      reason = (error as Error).message;
    }
  }
  return `signature NOT verified: ${reason}`;
};

/** One delivery as printed: when, the headers that matter, the verdict, the event. */
const report = (headers: IncomingHttpHeaders, path: string, body: string, verdict: string) => {
  let event: string;
  try {
    event = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    event = body;
  }
  return [
    `--- ${new Date().toISOString()} POST ${path}`,
    `webhook-id: ${headers['webhook-id'] ?? '(none)'}`,
    `webhook-timestamp: ${headers['webhook-timestamp'] ?? '(none)'}`,
    `webhook-signature: ${headers['webhook-signature'] ?? '(none)'}`,
    verdict,
    event,
    '',
  ].join('\n');
};

export const startWebhookReceiver = async (
  options: ReceiverOptions,
  print: (text: string) => void = (text) => process.stdout.write(`${text}\n`),
): Promise<{ url: string; server: Server }> => {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      print(report(request.headers, request.url ?? '/', body, verdictOf(options.secrets, request.headers, body)));
      response.writeHead(options.status).end();
    });
  });
  await new Promise<void>((listening, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, listening);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return { url: `http://${host}:${port}/`, server };
};

/** The options from the command line and the environment; throws on a bad one. */
export const optionsFrom = (argv: string[], env: NodeJS.ProcessEnv = process.env): ReceiverOptions => {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      secret: { type: 'string', multiple: true },
      status: { type: 'string' },
    },
  });
  const port = Number(values.port ?? env.WEBHOOK_RECEIVER_PORT ?? 4000);
  const status = Number(values.status ?? 204);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0 to 65535');
  if (!Number.isInteger(status) || status < 200 || status > 599) throw new Error('--status must be 200 to 599');
  const secrets = [...(values.secret ?? []), ...(env.WEBHOOK_SECRET ? [env.WEBHOOK_SECRET] : [])]
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
  for (const secret of secrets) {
    if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) throw new Error('a secret is whsec_ and base64');
  }
  return { port, host: values.host ?? '127.0.0.1', secrets, status };
};

// Run as the npm script, not when a test imports it.
if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  try {
    const options = optionsFrom(process.argv.slice(2));
    const { url } = await startWebhookReceiver(options);
    process.stdout.write(
      `Receiving webhooks at ${url} (answering ${options.status}); ${
        options.secrets.length ? `checking signatures with ${options.secrets.length} secret(s)` : 'no secret given'
      }. Ctrl-C stops.\n`,
    );
  } catch (error) {
    process.stderr.write(`webhook-receiver: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
