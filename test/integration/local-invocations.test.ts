import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { functionNameOf, routes } from '#lib/routes/route-table';
import { enableInvocationContexts } from '#local/invocations';
import { newTenant, uniqueId } from '#test/support/api';
import { startInProcessGateway } from '#test/support/in-process-gateway';
import { captureProcessOutput } from '#test/support/output-capture';

/*
 * The local stack runs every function in one process, many invocations at once; each logs with its own
 * function's Lambda context and keys, as on Lambda, where a process runs one at a time
 * (local/invocations.ts). The handlers run in this process behind an in-process gateway, with invocation
 * contexts on as in the stack's, while stdout is captured. Each line names the account it is about
 * (`portalAccountId`, passed where it is written): that says which request, and so which function, wrote it.
 */
const v11 = '/api/external/v1.1/Portals/accounts';
const PASSWORD = 'Portal-Pa55word!';

let gateway: Awaited<ReturnType<typeof startInProcessGateway>> | undefined;
let capture: ReturnType<typeof captureProcessOutput> | undefined;

beforeAll(async () => {
  // First: before any AWS SDK request of this process (newTenant's included).
  await enableInvocationContexts();
  process.env.LOG_LEVEL = 'info';
  gateway = await startInProcessGateway();
});

afterAll(async () => {
  capture?.restore();
  process.env.LOG_LEVEL = inject('logLevel');
  await gateway?.close();
});

const send = async (apiKey: string, method: string, path: string, body: unknown) => {
  const res = await fetch(`${gateway!.baseUrl}${v11}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), requestId: res.headers.get('x-amzn-requestid')! };
};

const accountBody = (clientUserId: string, externalId: string) => ({
  externalId,
  clientUserId,
  portalId: 'sandbox',
  payerIds: ['SBX01'],
  displayName: 'Sandbox',
  username: 'jdoe@clinic.example',
  password: PASSWORD,
});

/** The local gateway names a route's Lambda function by its handler module, as logging.test.ts expects. */
const functionOf = (name: string) => routes.find((route) => functionNameOf(route) === name)!.handler;

const jsonLines = () =>
  (capture?.text() ?? '')
    .split('\n')
    .filter((line) => line.startsWith('{"level"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('local invocations, many at once in one process', () => {
  it("log each line with its own function's name, request and keys", async () => {
    const tenant = await newTenant('invocations');
    const existing = Array.from({ length: 10 }, () => uniqueId('replaced'));
    for (const externalId of existing) {
      const created = await send(tenant.apiKey, 'POST', '', accountBody(tenant.clientUserId, externalId));
      expect(created.status, created.text).toBe(201);
    }
    const fresh = Array.from({ length: 10 }, () => uniqueId('created'));
    capture = captureProcessOutput();
    // Two functions, interleaved: CreatePortalAccount and ReplacePortalAccount, each with the authorizer before it.
    const answers = await Promise.all(
      existing.flatMap((replaced, i) => [
        send(tenant.apiKey, 'POST', '', accountBody(tenant.clientUserId, fresh[i]!)).then((res) => ({
          ...res,
          externalId: fresh[i]!,
          fn: 'CreatePortalAccount',
        })),
        send(tenant.apiKey, 'PUT', `/${replaced}`, accountBody(tenant.clientUserId, replaced)).then((res) => ({
          ...res,
          externalId: replaced,
          fn: 'ReplacePortalAccount',
        })),
      ]),
    );
    capture.restore();
    for (const answer of answers)
      expect(answer.status, answer.text).toBe(answer.fn === 'CreatePortalAccount' ? 201 : 200);

    const byAccount = new Map(answers.map((answer) => [answer.externalId, answer]));
    const lines = jsonLines().filter((line) => byAccount.has(String(line.portalAccountId)));
    expect(lines.map((line) => line.message).sort()).toEqual([
      ...Array(10).fill('Portal account created'),
      ...Array(10).fill('Portal account replaced'),
    ]);
    for (const line of lines) {
      const answer = byAccount.get(String(line.portalAccountId))!;
      expect(line.message).toBe(
        answer.fn === 'CreatePortalAccount' ? 'Portal account created' : 'Portal account replaced',
      );
      // The Lambda context (function, its request id) and the keys (request, route) of the invocation that wrote it.
      expect(line).toMatchObject({
        function_name: functionOf(answer.fn),
        route: answer.fn,
        requestId: answer.requestId,
      });
    }
    // One invocation per request: twenty request ids of Lambda's.
    expect(new Set(lines.map((line) => line.function_request_id)).size).toBe(20);
  });

  it('writes a line outside every invocation with no function context, while invocations run', async () => {
    const tenant = await newTenant('outside');
    const { log } = await import('#lib/observability/logger');
    capture = captureProcessOutput();
    const flying = Promise.all(
      Array.from({ length: 6 }, () =>
        send(tenant.apiKey, 'POST', '', accountBody(tenant.clientUserId, uniqueId('around'))),
      ),
    );
    // Between the invocations' awaits: as the demo seeding of `npm start` once logged under "Authorizer".
    await new Promise((resolve) => setTimeout(resolve, 5));
    log.info('Portal account created', { portalAccountId: 'outside-every-invocation' });
    const answers = await flying;
    capture.restore();
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(201));

    const outside = jsonLines().find((line) => line.portalAccountId === 'outside-every-invocation');
    expect(outside).toBeDefined();
    expect(outside).not.toHaveProperty('function_name');
    expect(outside).not.toHaveProperty('requestId');
    expect(outside).not.toHaveProperty('route');
    // The invocations around it still logged under their own function.
    const inside = jsonLines().filter(
      (line) => line.message === 'Portal account created' && line.portalAccountId !== 'outside-every-invocation',
    );
    expect(inside.map((line) => line.function_name)).toEqual(Array(6).fill(functionOf('CreatePortalAccount')));
  });
});
