import { inject } from 'vitest';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { provisioning } from '#lib/tenancy/provisioning';
import { type Conformance, conformanceTo } from './openapi-conformance.ts';

/** HTTP helpers for integration tests: real requests to the local stack. */
export const baseUrl = inject('baseUrl');

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  apiKey?: string | null;
  body?: unknown;
  /** Sent as-is (no JSON encoding). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  /**
   * Every answer is checked against the served OpenAPI document (openapi-conformance.ts) unless a test
   * says why not: `unchecked` is for answers no document can promise (a request that is not HTTP's).
   */
  conformance?: 'unchecked';
}

let conformance: Promise<Conformance> | undefined;
/** The document as the stack serves it, read once per test file. */
const servedConformance = () => {
  conformance ??= fetch(`${baseUrl}/api/external/openapi.json`).then(async (response) => {
    if (!response.ok) throw new Error(`the OpenAPI document answered ${response.status}`);
    return conformanceTo((await response.json()) as Record<string, unknown>);
  });
  return conformance;
};

/**
 * Throws unless the answer is one the served OpenAPI document allows (openapi-conformance.ts). For
 * tests that fetch by themselves (a redirect not to follow, a page); `call` runs it on every answer.
 * A followed redirect's answer is another server's (S3), so it is not checked.
 */
export const expectConforming = async (method: string, path: string, response: Response, text?: string) => {
  if (response.redirected) return;
  const body = text ?? (await response.clone().text());
  const violations = (await servedConformance()).check({
    method,
    path: path.startsWith('http') ? new URL(path).pathname : path,
    status: response.status,
    headers: response.headers,
    text: body,
  });
  if (violations.length) {
    throw new Error(
      `${method} ${path} answered ${response.status}, which the OpenAPI document does not allow:\n  ${violations.join('\n  ')}\n${body.slice(0, 500)}`,
    );
  }
};

export const call = async <T = any>(
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResponse<T>> => {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  if (options.conformance !== 'unchecked') await expectConforming(method, path, response, text);
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
};

const admin = provisioning(dynamoTenantStore);

/** A fresh tenant: client, API key, organization and one client user. */
export const newTenant = async (label = 'test') => {
  const { clientId, apiKey, keyId } = await admin.createClient(`${label} client`);
  const { organizationId } = await admin.createOrganization(clientId, `${label} organization`);
  const clientUserId = `user-${Math.random().toString(36).slice(2, 10)}`;
  await admin.createClientUser(clientId, organizationId, clientUserId);
  return { clientId, apiKey, keyId, organizationId, clientUserId, admin };
};

export const uniqueId = (prefix = 'id') =>
  `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
