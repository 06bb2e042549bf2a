import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultProvider } from '#lib/aws/environment-credentials';

/*
 * The provider deployed bundles use instead of the SDK's default chain (BUNDLING's alias): what Lambda
 * puts in the environment, read as the SDK reads it, and a clear refusal when it is not there.
 */
const LAMBDA_ENVIRONMENT = {
  AWS_ACCESS_KEY_ID: 'ASIAENVIRONMENTKEY',
  AWS_SECRET_ACCESS_KEY: 'environment-secret',
  AWS_SESSION_TOKEN: 'environment-session-token',
};
const setEnvironment = (values: Record<string, string | undefined>) => {
  for (const [name, value] of Object.entries(values)) vi.stubEnv(name, value);
};

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('environment credentials', () => {
  it("reads the role's key, secret and session token from the environment", async () => {
    setEnvironment(LAMBDA_ENVIRONMENT);
    const credentials = await defaultProvider()();
    expect(credentials).toMatchObject({
      accessKeyId: LAMBDA_ENVIRONMENT.AWS_ACCESS_KEY_ID,
      secretAccessKey: LAMBDA_ENVIRONMENT.AWS_SECRET_ACCESS_KEY,
      sessionToken: LAMBDA_ENVIRONMENT.AWS_SESSION_TOKEN,
    });
  });

  it('leaves the session token out for long-term keys', async () => {
    setEnvironment({ ...LAMBDA_ENVIRONMENT, AWS_SESSION_TOKEN: undefined });
    const credentials = await defaultProvider({})();
    expect(credentials.accessKeyId).toBe(LAMBDA_ENVIRONMENT.AWS_ACCESS_KEY_ID);
    expect(credentials).not.toHaveProperty('sessionToken');
  });

  it('refuses with a CredentialsProviderError naming the variables that are missing', async () => {
    setEnvironment({ AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_SESSION_TOKEN: undefined });
    const refusal = defaultProvider()();
    await expect(refusal).rejects.toMatchObject({ name: 'CredentialsProviderError', tryNextLink: false });
    await expect(refusal).rejects.toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set/);

    setEnvironment({ AWS_ACCESS_KEY_ID: LAMBDA_ENVIRONMENT.AWS_ACCESS_KEY_ID });
    await expect(defaultProvider()()).rejects.toThrow(/: AWS_SECRET_ACCESS_KEY not set/);
  });

  it('serves a client as its default provider, called with the client config', async () => {
    setEnvironment(LAMBDA_ENVIRONMENT);
    const client = new DynamoDBClient({ region: 'us-east-1', credentialDefaultProvider: defaultProvider });
    try {
      const credentials = await client.config.credentials();
      expect(credentials).toMatchObject({
        accessKeyId: LAMBDA_ENVIRONMENT.AWS_ACCESS_KEY_ID,
        sessionToken: LAMBDA_ENVIRONMENT.AWS_SESSION_TOKEN,
      });
    } finally {
      client.destroy();
    }
  });
});
