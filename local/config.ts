import { resolve } from 'node:path';
import { ConfigurationError, type Env } from '#lib/config/environment';
import { parseSettings, type Settings } from '#lib/config/settings';
import { authorizerCacheTtlFromEnv } from './gateway/authorizer-cache.ts';
import { type ClientLimits, localLimitsFromEnv } from './throttle.ts';

/*
 * The local deployables' configuration, read here and nowhere else in local/ (biome's noProcessEnv):
 * `npm start` (local/start.ts), the stack it starts (local/stack.ts, also started by the tests' global
 * setup) and the sandbox portal on its own (local/sandbox-portal/main.ts). Each is checked when it
 * starts, in one pass whose error names every variable set to what it may not be. The functions the
 * stack runs read theirs through lib/config/; the stack sets it for them (setFunctionEnvironment).
 */

/** The process's environment: the shell's, and what the stack set for its functions. */
export const localEnvironment = (): Env => process.env;

/**
 * Sets the functions' environment, as the Lambda runtime would: every function runs in this process and
 * reads it through lib/config/environment.ts. Explicit values win over whatever the shell had.
 */
export const setFunctionEnvironment = (values: Readonly<Record<string, string>>) => {
  Object.assign(process.env, values);
};

/** Runs each parser, so that one error names every bad variable rather than the first. */
const collect = <T extends object>(parsers: { [K in keyof T]: () => T[K] }): T => {
  const problems: string[] = [];
  const parsed: Partial<T> = {};
  for (const key of Object.keys(parsers) as (keyof T)[]) {
    try {
      parsed[key] = parsers[key]();
    } catch (error) {
      problems.push(...(error instanceof ConfigurationError ? error.problems : [(error as Error).message]));
    }
  }
  if (problems.length > 0) throw new ConfigurationError(problems);
  return parsed as T;
};

const isBlank = (raw: string | undefined): raw is undefined => raw === undefined || raw.trim() === '';

/** A whole number from `min` to `max`, else undefined when not set. */
const wholeNumber = (env: Env, name: string, min: number, max: number, what: string): number | undefined => {
  const raw = env[name];
  if (isBlank(raw)) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new Error(`${name} must be ${what}, not ${raw}.`);
  return value;
};

/** PORT: 0 (any free port) to 65535. */
const portOf = (env: Env, fallback: number) =>
  wholeNumber(env, 'PORT', 0, 65_535, 'a port number from 0 to 65535') ?? fallback;

/** LOCAL_OUTBOX_RELAY_INTERVAL_MS, when set: the relay's pause between polls. */
const relayIntervalOf = (env: Env) =>
  wholeNumber(env, 'LOCAL_OUTBOX_RELAY_INTERVAL_MS', 1, Number.MAX_SAFE_INTEGER, 'a positive whole number');

const DEFAULT_SWEEP_SECONDS = 2;

/** WEBHOOK_SWEEP_SECONDS: a positive number of seconds (fractions allowed), else the default. */
const webhookSweepMsOf = (env: Env) => {
  const raw = env.WEBHOOK_SWEEP_SECONDS;
  if (isBlank(raw)) return DEFAULT_SWEEP_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new Error(`WEBHOOK_SWEEP_SECONDS must be a number of seconds from 0 to 3600, not ${raw}.`);
  }
  return Math.round(seconds * 1000);
};

/** LOCAL_TABLE_GRANTS: `enforce` or `off` (the default). */
const tableGrantsOf = (env: Env): 'enforce' | 'off' => {
  const raw = env.LOCAL_TABLE_GRANTS;
  if (isBlank(raw) || raw === 'off') return 'off';
  if (raw === 'enforce') return 'enforce';
  throw new Error(`LOCAL_TABLE_GRANTS must be enforce or off, not ${raw}.`);
};

/** What the local stack reads for itself when it starts (startLocalStack; its options win). */
export interface StackSettings {
  /** LOCAL_OUTBOX_RELAY_INTERVAL_MS: the outbox relay's pause between polls (the relay's default when unset). */
  relayIntervalMs: number | undefined;
  /** LOCAL_AUTHORIZER_CACHE_TTL (local/gateway/authorizer-cache.ts). */
  authorizerCacheTtlSeconds: number;
  /** LOCAL_RATE_LIMIT, LOCAL_BURST_LIMIT, LOCAL_QUOTA_PER_DAY (local/throttle.ts). */
  defaultLimits: ClientLimits;
  /** WEBHOOK_SWEEP_SECONDS: the webhook retry timer's period (local/webhook-deliveries.ts). */
  webhookSweepMs: number;
  /** LOCAL_TABLE_GRANTS: `enforce` holds the functions to their table grants as IAM would (local/table-grants.ts). */
  tableGrants: 'enforce' | 'off';
  /**
   * The functions' settings as the shell gives them (quotas, RECHECK_EVERY_SECONDS...): checked with the
   * stack's own, so a bad one stops the start rather than every handler's first import.
   */
  functions: Settings;
}

export const stackSettingsOf = (env: Env): StackSettings =>
  collect<StackSettings>({
    relayIntervalMs: () => relayIntervalOf(env),
    authorizerCacheTtlSeconds: () => authorizerCacheTtlFromEnv(env),
    defaultLimits: () => localLimitsFromEnv(env),
    webhookSweepMs: () => webhookSweepMsOf(env),
    tableGrants: () => tableGrantsOf(env),
    functions: () => parseSettings(env),
  });

/** What `npm start` passes the stack (local/start.ts). */
export interface StartSettings {
  /** LOCAL_STATE_DIR, else .local/. */
  stateDir: string;
  /** `--clean` or LOCAL_CLEAN=1: start from empty state. */
  clean: boolean;
  /** PORT (3000) and HOST (127.0.0.1). */
  port: number;
  host: string;
  /** DYNAMODB_ENDPOINT and S3_ENDPOINT: another DynamoDB or S3 than the embedded emulators. */
  dynamoEndpoint: string | undefined;
  s3Endpoint: string | undefined;
  /** LOCAL_TABLE_NAME: the table (service-review by default), so runs against one external DynamoDB keep apart. */
  tableName: string | undefined;
}

const urlOf = (env: Env, name: string) => {
  const raw = env[name];
  if (isBlank(raw)) return undefined;
  if (!URL.canParse(raw)) throw new Error(`${name} must be a URL, not ${raw}.`);
  return raw;
};

export const startSettingsOf = (env: Env, argv: readonly string[]): StartSettings =>
  collect<StartSettings>({
    stateDir: () => resolve(env.LOCAL_STATE_DIR || '.local'),
    clean: () => argv.includes('--clean') || env.LOCAL_CLEAN === '1',
    port: () => portOf(env, 3000),
    host: () => env.HOST ?? '127.0.0.1',
    dynamoEndpoint: () => urlOf(env, 'DYNAMODB_ENDPOINT'),
    s3Endpoint: () => urlOf(env, 'S3_ENDPOINT'),
    tableName: () => env.LOCAL_TABLE_NAME || undefined,
  });

/** The sandbox portal on its own (local/sandbox-portal/main.ts): PORT (3100) and HOST (127.0.0.1). */
export const sandboxPortalSettingsOf = (env: Env) =>
  collect<{ port: number; host: string }>({ port: () => portOf(env, 3100), host: () => env.HOST ?? '127.0.0.1' });

/** The local PAS payer on its own (local/pas-payer/main.ts): PORT (3200) and HOST (127.0.0.1). */
export const pasPayerSettingsOf = (env: Env) =>
  collect<{ port: number; host: string }>({ port: () => portOf(env, 3200), host: () => env.HOST ?? '127.0.0.1' });
