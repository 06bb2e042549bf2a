import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as authorizer } from '#functions/authorizer';
import { dynamo } from '#lib/aws/dynamodb';
import { clientEntity } from '#lib/entities/tenancy';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { provisioning } from '#lib/tenancy/provisioning';
import { call, newTenant } from '#test/support/api';

const admin = provisioning(dynamoTenantStore);
const schemas = (apiKey: string) => call('GET', '/api/external/v1.1/Schemas', { apiKey });
const throttled = {
  type: 'about:blank',
  title: 'Too Many Requests',
  status: 429,
  detail: 'The request rate limit was exceeded.',
};

describe('per-client throttling at the gateway (token bucket per client)', () => {
  it('refuses a client past its own burst with 429 and Retry-After, leaves others alone, and refills', async () => {
    // One request a second, two at once: six together cannot all pass.
    const limited = await admin.createClient('throttled client', { limits: { rateLimit: 1, burstLimit: 2 } });
    const other = await newTenant('unthrottled');

    const responses = await Promise.all(Array.from({ length: 6 }, () => schemas(limited.apiKey)));
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(2);
    const refused = responses.filter((res) => res.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const res of refused) {
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toEqual(throttled);
      expect(res.headers.get('retry-after')).toBe('1');
    }

    // The same moment, another client is within its (default) limits.
    const others = await Promise.all(Array.from({ length: 6 }, () => schemas(other.apiKey)));
    expect(others.map((res) => res.status)).toEqual(Array(6).fill(200));

    // After Retry-After, the bucket has a token again.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await schemas(limited.apiKey)).status).toBe(200);
  });

  it('throttles by client, not by key: two keys of one client share its bucket', async () => {
    const limited = await admin.createClient('one bucket', { limits: { rateLimit: 1, burstLimit: 1 } });
    const second = await admin.createApiKey(limited.clientId);
    const statuses = (await Promise.all([schemas(limited.apiKey), schemas(second.apiKey)])).map((res) => res.status);
    expect(statuses.sort()).toEqual([200, 429]);
  });

  it('refuses a client past its daily quota with 429 "Limit Exceeded" until the next UTC day', async () => {
    const limited = await admin.createClient('daily quota', {
      limits: { rateLimit: 100, burstLimit: 100, quotaPerDay: 3 },
    });
    for (let i = 0; i < 3; i++) expect((await schemas(limited.apiKey)).status).toBe(200);
    const refused = await schemas(limited.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toEqual({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Limit Exceeded: the daily request quota is used up.',
    });
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(Math.abs(retryAfter - (midnight.getTime() - Date.now()) / 1000)).toBeLessThan(5);
    // The quota is the client's: another is untouched.
    expect((await schemas((await newTenant('no daily quota')).apiKey)).status).toBe(200);
  });

  it('checks the key before the limit: an unknown key is 401, never 429', async () => {
    const res = await schemas('srk_thisKeyWasNeverIssuedToAnybodyAtAll');
    expect(res.status).toBe(401);
  });
});

describe('usage plan key (AWS: the authorizer names the client to the usage plan)', () => {
  const authorize = (apiKey: string) =>
    authorizer({
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:us-east-1:000000000000:api/prod/GET/api/external/v1.1/Schemas',
      headers: { 'x-api-key': apiKey },
    } as unknown as APIGatewayRequestAuthorizerEvent);

  it("returns the client's usageIdentifierKey when its Client item has one, and none otherwise", async () => {
    const client = await admin.createClient('metered client');
    expect(await authorize(client.apiKey)).not.toHaveProperty('usageIdentifierKey');

    const usageKey = 'apigw-key-value-for-the-usage-plan-0123456789';
    await dynamo.send(
      new UpdateCommand({
        TableName: process.env.TABLE_NAME,
        Key: clientEntity.key({ clientId: client.clientId }),
        UpdateExpression: 'SET usageIdentifierKey = :key',
        ExpressionAttributeValues: { ':key': usageKey },
      }),
    );
    const result = await authorize(client.apiKey);
    expect(result).toMatchObject({ principalId: client.clientId, usageIdentifierKey: usageKey });
    expect(await dynamoTenantStore.getClient(client.clientId)).toMatchObject({ usageIdentifierKey: usageKey });
    // Never in the context handlers see (or the access log records).
    expect(JSON.stringify(result.context)).not.toContain(usageKey);
  });
});
