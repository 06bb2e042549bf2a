import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';

/**
 * A tiny payer for the SMART client's tests, over real HTTP on loopback: a token endpoint that verifies
 * client assertions against the JWKS it is given (as a payer verifies ours against our jwksUri) and
 * issues numbered tokens, and a PAS endpoint that accepts only tokens it issued and has not revoked.
 * Tests change its behaviour through `state`.
 */
interface PayerState {
  tokenRequests: number;
  resourceCalls: number;
  /** Every accepted assertion's jti, to check none repeats. */
  jtis: string[];
  issued: string[];
  /** Tokens the PAS endpoint answers 401 to. */
  revoked: Set<string>;
  expiresIn: number;
  /** The token endpoint's answer instead of a token, when set. */
  refusal: { status: number; body: string; headers?: Record<string, string> } | null;
  /** The form fields of the last token request. */
  lastForm: Record<string, string>;
  /** The payer's clock (epoch ms), which a test may move along with the client's. */
  clock: () => number;
}

const bodyOf = async (request: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

export const startPayer = async (jwks: JSONWebKeySet, clientId: string) => {
  const state: PayerState = {
    tokenRequests: 0,
    resourceCalls: 0,
    jtis: [],
    issued: [],
    revoked: new Set(),
    expiresIn: 300,
    refusal: null,
    lastForm: {},
    clock: Date.now,
  };
  const keys = createLocalJWKSet(jwks);
  let origin = '';
  const server = createServer(async (request, response) => {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    const body = await bodyOf(request);
    if (request.url === '/auth/token') {
      state.tokenRequests++;
      const form = Object.fromEntries(new URLSearchParams(body));
      state.lastForm = form;
      if (state.refusal) {
        response.writeHead(state.refusal.status, state.refusal.headers ?? {}).end(state.refusal.body);
        return;
      }
      try {
        const { payload } = await jwtVerify(form.client_assertion ?? '', keys, {
          issuer: clientId,
          subject: clientId,
          audience: `${origin}/auth/token`,
          algorithms: ['RS384'],
          maxTokenAge: 300,
          currentDate: new Date(state.clock()),
        });
        if (state.jtis.includes(payload.jti!)) throw new Error('jti reused');
        state.jtis.push(payload.jti!);
      } catch {
        answer(401, { error: 'invalid_client' });
        return;
      }
      const token = `tok-${state.issued.length + 1}`;
      state.issued.push(token);
      answer(200, { access_token: token, token_type: 'bearer', expires_in: state.expiresIn, scope: form.scope });
      return;
    }
    state.resourceCalls++;
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!token || !state.issued.includes(token) || state.revoked.has(token)) {
      answer(401, { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'login' }] });
      return;
    }
    answer(200, { resourceType: 'Bundle', type: 'collection', id: token });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    state,
    tokenUrl: `${origin}/auth/token`,
    fhirBaseUrl: `${origin}/fhir`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
