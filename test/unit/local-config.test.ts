import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_THROTTLE, DEFAULT_QUOTA_PER_DAY } from '#lib/config/defaults';
import { ConfigurationError } from '#lib/config/environment';
import { parseSettings } from '#lib/config/settings';
import { GATEWAY_LIMITS } from '#lib/http/gateway-responses';
import { pasPayerSettingsOf, sandboxPortalSettingsOf, stackSettingsOf, startSettingsOf } from '#local/config';

const errorOf = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as ConfigurationError).message.split('\n');
  }
  throw new Error('the environment was accepted');
};

describe('the local stack’s configuration (local/config.ts)', () => {
  it('defaults what is not set', () => {
    expect(stackSettingsOf({})).toEqual({
      relayIntervalMs: undefined,
      authorizerCacheTtlSeconds: GATEWAY_LIMITS.authorizerCacheTtlSeconds,
      defaultLimits: { ...DEFAULT_CLIENT_THROTTLE, quotaPerDay: DEFAULT_QUOTA_PER_DAY },
      webhookSweepMs: 2000,
      tableGrants: 'off',
      functions: parseSettings({}),
    });
    expect(startSettingsOf({}, [])).toEqual({
      stateDir: resolve('.local'),
      clean: false,
      port: 3000,
      host: '127.0.0.1',
      dynamoEndpoint: undefined,
      s3Endpoint: undefined,
      tableName: undefined,
    });
    expect(sandboxPortalSettingsOf({})).toEqual({ port: 3100, host: '127.0.0.1' });
    expect(pasPayerSettingsOf({})).toEqual({ port: 3200, host: '127.0.0.1' });
  });

  it('reads each variable', () => {
    expect(
      stackSettingsOf({
        LOCAL_OUTBOX_RELAY_INTERVAL_MS: '25',
        LOCAL_AUTHORIZER_CACHE_TTL: '0',
        LOCAL_RATE_LIMIT: '5',
        LOCAL_BURST_LIMIT: '10',
        LOCAL_QUOTA_PER_DAY: '20',
        WEBHOOK_SWEEP_SECONDS: '0.5',
        LOCAL_TABLE_GRANTS: 'enforce',
        RECHECK_EVERY_SECONDS: '5',
      }),
    ).toEqual({
      relayIntervalMs: 25,
      authorizerCacheTtlSeconds: 0,
      defaultLimits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 20 },
      webhookSweepMs: 500,
      tableGrants: 'enforce',
      functions: parseSettings({ RECHECK_EVERY_SECONDS: '5' }),
    });
    expect(
      startSettingsOf(
        {
          LOCAL_STATE_DIR: '/tmp/state',
          PORT: '0',
          HOST: '0.0.0.0',
          DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
          S3_ENDPOINT: 'http://127.0.0.1:4569',
          LOCAL_TABLE_NAME: 'mine',
        },
        ['--clean'],
      ),
    ).toEqual({
      stateDir: '/tmp/state',
      clean: true,
      port: 0,
      host: '0.0.0.0',
      dynamoEndpoint: 'http://127.0.0.1:8000',
      s3Endpoint: 'http://127.0.0.1:4569',
      tableName: 'mine',
    });
    expect(startSettingsOf({ LOCAL_CLEAN: '1' }, []).clean).toBe(true);
    expect(sandboxPortalSettingsOf({ PORT: '8080', HOST: '::1' })).toEqual({ port: 8080, host: '::1' });
    expect(pasPayerSettingsOf({ PORT: '8081', HOST: '::1' })).toEqual({ port: 8081, host: '::1' });
  });

  it('names every bad variable in one error', () => {
    expect(
      errorOf(() =>
        stackSettingsOf({
          LOCAL_OUTBOX_RELAY_INTERVAL_MS: '0',
          LOCAL_AUTHORIZER_CACHE_TTL: '3601',
          LOCAL_BURST_LIMIT: 'lots',
          WEBHOOK_SWEEP_SECONDS: 'never',
          LOCAL_TABLE_GRANTS: 'on',
          RECHECK_EVERY_SECONDS: '0',
          AUTOMATION_RUNS_PER_DAY: 'x',
        }),
      ),
    ).toEqual([
      'The environment is not a valid configuration:',
      '- LOCAL_OUTBOX_RELAY_INTERVAL_MS must be a positive whole number, not 0.',
      '- LOCAL_AUTHORIZER_CACHE_TTL must be whole seconds from 0 to 3600, not 3601.',
      '- LOCAL_BURST_LIMIT must be a positive number, not lots.',
      '- WEBHOOK_SWEEP_SECONDS must be a number of seconds from 0 to 3600, not never.',
      '- LOCAL_TABLE_GRANTS must be enforce or off, not on.',
      '- AUTOMATION_RUNS_PER_DAY must be a positive whole number, not x.',
      '- RECHECK_EVERY_SECONDS must be a positive whole number, not 0.',
    ]);
    expect(errorOf(() => startSettingsOf({ PORT: 'http', DYNAMODB_ENDPOINT: 'localhost' }, []))).toEqual([
      'The environment is not a valid configuration:',
      '- PORT must be a port number from 0 to 65535, not http.',
      '- DYNAMODB_ENDPOINT must be a URL, not localhost.',
    ]);
    expect(errorOf(() => sandboxPortalSettingsOf({ PORT: '70000' }))).toEqual([
      'The environment is not a valid configuration:',
      '- PORT must be a port number from 0 to 65535, not 70000.',
    ]);
  });
});
