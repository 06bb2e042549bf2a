import { inject } from 'vitest';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { provisioning } from '#lib/tenancy/provisioning';

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
}

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
