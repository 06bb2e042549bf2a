import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AUTOMATION_QUOTA_DEFAULTS,
  PAYER_RECHECK_EVERY_SECONDS_DEFAULT,
  RECHECK_EVERY_SECONDS_DEFAULT,
  STORAGE_QUOTA_DEFAULTS,
} from '#lib/config/defaults';
import { ConfigurationError } from '#lib/config/environment';
import { bucketName, tableName } from '#lib/config/resources';
import {
  invocationsShareProcess,
  metricsDisabledSwitch,
  onLambda,
  traceHeaderVariable,
  tracingEnabled,
  wantedLogLevel,
  xrayDaemonAddress,
} from '#lib/config/runtime';
import { checkSettings, parseSettings } from '#lib/config/settings';

const problemsOf = (env: Record<string, string>): readonly string[] => {
  try {
    parseSettings(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as ConfigurationError).problems;
  }
  throw new Error('parseSettings accepted the environment');
};

describe('the functions’ settings (lib/config/settings.ts)', () => {
  it('defaults every setting that is not set', () => {
    expect(parseSettings({})).toEqual({
      storageQuotas: STORAGE_QUOTA_DEFAULTS,
      automationQuotas: AUTOMATION_QUOTA_DEFAULTS,
      recheckEverySeconds: RECHECK_EVERY_SECONDS_DEFAULT,
      payerRecheckEverySeconds: PAYER_RECHECK_EVERY_SECONDS_DEFAULT,
      webhookUrlPolicy: 'public-https',
      payerUrlPolicy: 'https',
      payerSubscriptionsEverySeconds: 300,
      s3ForcePathStyle: false,
      s3VerifiesChecksums: true,
    });
  });

  it('takes the log levels in any case', () => {
    expect(() => parseSettings({ LOG_LEVEL: 'debug', POWERTOOLS_LOG_LEVEL: 'Warn' })).not.toThrow();
  });

  it('treats an empty or blank value as not set', () => {
    expect(parseSettings({ RECHECK_EVERY_SECONDS: ' ', WEBHOOK_URL_POLICY: '', S3_FORCE_PATH_STYLE: '' })).toEqual(
      parseSettings({}),
    );
  });

  it('parses each setting', () => {
    expect(
      parseSettings({
        ATTACHMENT_BYTES_PER_CLIENT: '1024',
        PORTAL_ACCOUNTS_PER_ORGANIZATION: '3',
        PAYER_CONNECTIONS_PER_ORGANIZATION: '7',
        AUTOMATION_RUNS_PER_HOUR: '4',
        AUTOMATION_RUNS_PER_DAY: '5',
        AUTOMATION_RUNS_IN_FLIGHT: '6',
        RECHECK_EVERY_SECONDS: '5',
        PAYER_RECHECK_EVERY_SECONDS: '3',
        PAYER_SUBSCRIPTIONS_EVERY_SECONDS: '2',
        WEBHOOK_URL_POLICY: 'local',
        PAYER_URL_POLICY: 'local',
        S3_FORCE_PATH_STYLE: 'true',
        S3_VERIFIES_CHECKSUMS: 'false',
      }),
    ).toEqual({
      storageQuotas: { attachmentBytes: 1024, portalAccountsPerOrganization: 3, payerConnectionsPerOrganization: 7 },
      automationQuotas: { runsPerHour: 4, runsPerDay: 5, runsInFlight: 6 },
      recheckEverySeconds: 5,
      payerRecheckEverySeconds: 3,
      payerSubscriptionsEverySeconds: 2,
      webhookUrlPolicy: 'local',
      payerUrlPolicy: 'local',
      s3ForcePathStyle: true,
      s3VerifiesChecksums: false,
    });
    expect(parseSettings({ WEBHOOK_URL_POLICY: 'public-https' }).webhookUrlPolicy).toBe('public-https');
    expect(parseSettings({ PAYER_URL_POLICY: 'https' }).payerUrlPolicy).toBe('https');
  });

  it.each([
    ['ATTACHMENT_BYTES_PER_CLIENT', '0', 'ATTACHMENT_BYTES_PER_CLIENT must be a positive whole number, not 0.'],
    ['PORTAL_ACCOUNTS_PER_ORGANIZATION', '1.5', 'must be a positive whole number, not 1.5.'],
    ['PAYER_CONNECTIONS_PER_ORGANIZATION', '0', 'must be a positive whole number, not 0.'],
    ['AUTOMATION_RUNS_PER_HOUR', '-1', 'must be a positive whole number, not -1.'],
    ['AUTOMATION_RUNS_PER_DAY', 'lots', 'must be a positive whole number, not lots.'],
    ['AUTOMATION_RUNS_IN_FLIGHT', '1e40', 'must be a positive whole number, not 1e40.'],
    ['RECHECK_EVERY_SECONDS', 'hourly', 'RECHECK_EVERY_SECONDS must be a positive whole number, not hourly.'],
    ['PAYER_SUBSCRIPTIONS_EVERY_SECONDS', '0', 'must be a positive whole number, not 0.'],
    ['WEBHOOK_URL_POLICY', 'anything', 'WEBHOOK_URL_POLICY must be public-https or local, not anything.'],
    ['PAYER_URL_POLICY', 'public-https', 'PAYER_URL_POLICY must be https or local, not public-https.'],
    ['S3_FORCE_PATH_STYLE', '1', 'S3_FORCE_PATH_STYLE must be true or false, not 1.'],
    ['S3_VERIFIES_CHECKSUMS', 'no', 'S3_VERIFIES_CHECKSUMS must be true or false, not no.'],
    [
      'LOG_LEVEL',
      'verbose',
      'LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT (in any case), not verbose.',
    ],
    [
      'POWERTOOLS_LOG_LEVEL',
      'loud',
      'POWERTOOLS_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT',
    ],
  ])('refuses %s=%s, saying what it must be', (name, value, problem) => {
    const [only, ...others] = problemsOf({ [name]: value });
    expect(others).toEqual([]);
    expect(only).toContain(name);
    expect(only).toContain(problem);
  });

  it('names every wrong variable in one error, one line each', () => {
    const error = (() => {
      try {
        parseSettings({ RECHECK_EVERY_SECONDS: '0', WEBHOOK_URL_POLICY: 'open', AUTOMATION_RUNS_PER_DAY: 'x' });
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.name).toBe('ConfigurationError');
    expect(error?.message.split('\n')).toEqual([
      'The environment is not a valid configuration:',
      '- AUTOMATION_RUNS_PER_DAY must be a positive whole number, not x.',
      '- RECHECK_EVERY_SECONDS must be a positive whole number, not 0.',
      '- WEBHOOK_URL_POLICY must be public-https or local, not open.',
    ]);
  });

  it.each(['CURSOR_SIGNING_KEY', 'RPA_TOKEN_KEY', 'IDEMPOTENCY_FINGERPRINT_KEY'])(
    'checks the form of %s and never quotes it',
    (name) => {
      const good = randomBytes(32).toString('base64');
      const rotated = `${randomBytes(32).toString('base64url')}, ${good}`;
      expect(() => parseSettings({ [name]: good })).not.toThrow();
      expect(() => parseSettings({ [name]: rotated })).not.toThrow();
      const short = randomBytes(16).toString('base64');
      for (const bad of [short, `${good},${short}`]) {
        const problems = problemsOf({ [name]: bad, RECHECK_EVERY_SECONDS: '0' });
        expect(problems).toEqual([
          'RECHECK_EVERY_SECONDS must be a positive whole number, not 0.',
          `${name} is not valid key material: it must be comma-separated base64 keys of at least 32 bytes.`,
        ]);
        expect(problems.join('\n')).not.toContain(short);
        expect(problems.join('\n')).not.toContain(good);
      }
    },
  );
});

describe('the process’s configuration', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('checks the process’s environment at cold start, naming what is wrong', () => {
    vi.stubEnv('AUTOMATION_RUNS_IN_FLIGHT', 'many');
    expect(checkSettings).toThrow(/AUTOMATION_RUNS_IN_FLIGHT must be a positive whole number, not many\./);
    vi.stubEnv('AUTOMATION_RUNS_IN_FLIGHT', '2');
    expect(checkSettings).not.toThrow();
  });

  it('requires a resource name only when it is used, and reads it on every use', () => {
    vi.stubEnv('TABLE_NAME', '');
    expect(tableName).toThrow('Environment variable TABLE_NAME is not set');
    vi.stubEnv('TABLE_NAME', 'one');
    expect(tableName()).toBe('one');
    vi.stubEnv('TABLE_NAME', 'another');
    expect(tableName()).toBe('another');
    vi.stubEnv('BUCKET_NAME', '');
    expect(bucketName).toThrow('Environment variable BUCKET_NAME is not set');
  });

  it('reads what the Lambda runtime and Powertools’ switches say on every use', () => {
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', undefined);
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', undefined);
    vi.stubEnv('LOG_LEVEL', undefined);
    expect(wantedLogLevel()).toBe('INFO');
    vi.stubEnv('LOG_LEVEL', 'warn');
    expect(wantedLogLevel()).toBe('WARN');
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'error');
    expect(wantedLogLevel()).toBe('ERROR');
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', 'debug');
    expect(wantedLogLevel()).toBe('DEBUG');

    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-a;Sampled=1');
    expect(traceHeaderVariable()).toBe('Root=1-a;Sampled=1');
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-b;Sampled=0');
    expect(traceHeaderVariable()).toBe('Root=1-b;Sampled=0');

    vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', '127.0.0.1:2000');
    expect(xrayDaemonAddress()).toBe('127.0.0.1:2000');
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'FALSE');
    expect(tracingEnabled()).toBe(false);
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', undefined);
    expect(tracingEnabled()).toBe(true);

    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'True');
    expect(metricsDisabledSwitch()).toBe('true');
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', undefined);
    expect(metricsDisabledSwitch()).toBeUndefined();

    vi.stubEnv('AWS_LAMBDA_MAX_CONCURRENCY', '64');
    expect(invocationsShareProcess()).toBe(true);
    vi.stubEnv('AWS_LAMBDA_MAX_CONCURRENCY', undefined);
    expect(invocationsShareProcess()).toBe(false);

    expect(onLambda({ AWS_LAMBDA_FUNCTION_NAME: 'f' })).toBe(true);
    expect(onLambda({})).toBe(false);
  });
});
