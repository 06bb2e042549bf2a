import {
  AUTOMATION_QUOTA_DEFAULTS,
  PAYER_RECHECK_EVERY_SECONDS_DEFAULT,
  PAYER_SUBSCRIPTIONS_EVERY_SECONDS_DEFAULT,
  RECHECK_EVERY_SECONDS_DEFAULT,
  STORAGE_QUOTA_DEFAULTS,
} from './defaults.ts';
import { ConfigurationError, type Env, environment } from './environment.ts';
import { LOG_LEVELS } from './runtime.ts';

/*
 * The functions' optional settings, each with its default: parsed from the environment in one pass
 * that names every variable set to something it may not be (ConfigurationError), never only the
 * first. checkSettings runs at every function's cold start (lib/observability/invocation.ts), and the
 * local stack parses them when it starts (local/config.ts), so a bad value fails the first invocation
 * or the start, not a request hours later. settings() parses once, on first use, and keeps the result.
 */

/** Where webhooks may be sent (lib/webhooks/target-address.ts, docs/webhooks.md "No SSRF"). */
type WebhookUrlPolicy = 'public-https' | 'local';

/** Which payer URLs may be called (lib/payer-api/payer-url-policy.ts, docs/payer-api.md, "Payer URLs"). */
type PayerUrlPolicy = 'https' | 'local';

export interface Settings {
  /** Storage quotas of a client without its own (docs/security.md, "Quotas"). */
  storageQuotas: {
    attachmentBytes: number;
    portalAccountsPerOrganization: number;
    payerConnectionsPerOrganization: number;
  };
  /** Automation quotas of a client without its own (lib/runs/automation-quotas.ts, docs/rpa.md). */
  automationQuotas: { runsPerHour: number; runsPerDay: number; runsInFlight: number };
  /**
   * Scheduled re-checks (lib/rechecks/recheck-policy.ts, docs/rechecks.md): the first back-off step for
   * a client without its own. Locally the same value is the re-check timer's period, so a demo with
   * RECHECK_EVERY_SECONDS=5 sees a re-check within seconds.
   */
  recheckEverySeconds: number;
  /**
   * The first back-off step of a request read through the payer's API (docs/rechecks.md): shorter than a
   * portal's, never longer than the client's own step. Locally the re-check timer also runs this often.
   */
  payerRecheckEverySeconds: number;
  /**
   * How often the local stack's subscription keeper looks at the due subscriptions (renewal, heartbeats,
   * `$status`; docs/payer-api.md, "Subscriptions"); on AWS its schedule runs every 5 minutes.
   */
  payerSubscriptionsEverySeconds: number;
  /**
   * https and public addresses only, unless WEBHOOK_URL_POLICY=local (set by the local stack alone),
   * which also allows http and loopback. Anything else is a configuration error, never a looser policy.
   */
  webhookUrlPolicy: WebhookUrlPolicy;
  /**
   * https only, unless PAYER_URL_POLICY=local (set by the local stack alone), which also allows http on a
   * loopback host (the local PAS payer). Anything else is a configuration error, never a looser policy.
   */
  payerUrlPolicy: PayerUrlPolicy;
  /** S3_FORCE_PATH_STYLE: where the endpoint cannot serve virtual-hosted buckets (s3rver). */
  s3ForcePathStyle: boolean;
  /**
   * Whether the attachments bucket's store refuses bytes that miss their declared SHA-256 and reports it
   * (S3 does: the default). The local stack sets `false` for its emulator (docs/attachments.md, "Verification").
   */
  s3VerifiesChecksums: boolean;
}

/** Variables holding HMAC keys (lib/crypto/key-sources.ts): checked for their form, never quoted in an error. */
const KEY_MATERIAL_VARIABLES = ['CURSOR_SIGNING_KEY', 'RPA_TOKEN_KEY', 'IDEMPOTENCY_FINGERPRINT_KEY'] as const;

/** Comma-separated base64/base64url keys of at least 32 bytes each (lib/crypto/key-sources.ts). */
const isKeyMaterial = (value: string) =>
  value.split(',').every((key) => Buffer.from(key.trim(), 'base64').length >= 32);

type Problems = string[];

const isBlank = (raw: string | undefined): raw is undefined => raw === undefined || raw.trim() === '';

const positiveWholeNumber = (env: Env, problems: Problems, name: string, fallback: number): number => {
  const raw = env[name];
  if (isBlank(raw)) return fallback;
  const value = Number(raw);
  if (Number.isSafeInteger(value) && value >= 1) return value;
  problems.push(`${name} must be a positive whole number, not ${raw}.`);
  return fallback;
};

const trueOrFalse = (env: Env, problems: Problems, name: string, fallback: boolean): boolean => {
  const raw = env[name];
  if (isBlank(raw)) return fallback;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  problems.push(`${name} must be true or false, not ${raw}.`);
  return fallback;
};

const webhookUrlPolicyOf = (env: Env, problems: Problems): WebhookUrlPolicy => {
  const raw = env.WEBHOOK_URL_POLICY;
  if (raw === undefined || raw === '' || raw === 'public-https') return 'public-https';
  if (raw === 'local') return 'local';
  problems.push(`WEBHOOK_URL_POLICY must be public-https or local, not ${raw}.`);
  return 'public-https';
};

const payerUrlPolicyOf = (env: Env, problems: Problems): PayerUrlPolicy => {
  const raw = env.PAYER_URL_POLICY;
  if (raw === undefined || raw === '' || raw === 'https') return 'https';
  if (raw === 'local') return 'local';
  problems.push(`PAYER_URL_POLICY must be https or local, not ${raw}.`);
  return 'https';
};

const checkKeyMaterial = (env: Env, problems: Problems) => {
  for (const name of KEY_MATERIAL_VARIABLES) {
    const raw = env[name];
    if (raw && !isKeyMaterial(raw)) {
      problems.push(`${name} is not valid key material: it must be comma-separated base64 keys of at least 32 bytes.`);
    }
  }
};

/**
 * Our log level variables (lib/config/runtime.ts): read on every line, since tests change them, but a
 * misspelt one is named at cold start rather than ignored. AWS_LAMBDA_LOG_LEVEL is Lambda's own.
 */
const checkLogLevels = (env: Env, problems: Problems) => {
  for (const name of ['POWERTOOLS_LOG_LEVEL', 'LOG_LEVEL']) {
    const raw = env[name];
    if (!isBlank(raw) && !LOG_LEVELS.includes(raw.toUpperCase())) {
      problems.push(`${name} must be one of ${LOG_LEVELS.join(', ')} (in any case), not ${raw}.`);
    }
  }
};

/** The settings `env` holds, or one ConfigurationError naming every variable that is wrong. */
export const parseSettings = (env: Env): Settings => {
  const problems: Problems = [];
  const number = (name: string, fallback: number) => positiveWholeNumber(env, problems, name, fallback);
  const settings: Settings = {
    storageQuotas: {
      attachmentBytes: number('ATTACHMENT_BYTES_PER_CLIENT', STORAGE_QUOTA_DEFAULTS.attachmentBytes),
      portalAccountsPerOrganization: number(
        'PORTAL_ACCOUNTS_PER_ORGANIZATION',
        STORAGE_QUOTA_DEFAULTS.portalAccountsPerOrganization,
      ),
      payerConnectionsPerOrganization: number(
        'PAYER_CONNECTIONS_PER_ORGANIZATION',
        STORAGE_QUOTA_DEFAULTS.payerConnectionsPerOrganization,
      ),
    },
    automationQuotas: {
      runsPerHour: number('AUTOMATION_RUNS_PER_HOUR', AUTOMATION_QUOTA_DEFAULTS.runsPerHour),
      runsPerDay: number('AUTOMATION_RUNS_PER_DAY', AUTOMATION_QUOTA_DEFAULTS.runsPerDay),
      runsInFlight: number('AUTOMATION_RUNS_IN_FLIGHT', AUTOMATION_QUOTA_DEFAULTS.runsInFlight),
    },
    recheckEverySeconds: number('RECHECK_EVERY_SECONDS', RECHECK_EVERY_SECONDS_DEFAULT),
    payerRecheckEverySeconds: number('PAYER_RECHECK_EVERY_SECONDS', PAYER_RECHECK_EVERY_SECONDS_DEFAULT),
    payerSubscriptionsEverySeconds: number(
      'PAYER_SUBSCRIPTIONS_EVERY_SECONDS',
      PAYER_SUBSCRIPTIONS_EVERY_SECONDS_DEFAULT,
    ),
    webhookUrlPolicy: webhookUrlPolicyOf(env, problems),
    payerUrlPolicy: payerUrlPolicyOf(env, problems),
    s3ForcePathStyle: trueOrFalse(env, problems, 'S3_FORCE_PATH_STYLE', false),
    s3VerifiesChecksums: trueOrFalse(env, problems, 'S3_VERIFIES_CHECKSUMS', true),
  };
  checkKeyMaterial(env, problems);
  checkLogLevels(env, problems);
  if (problems.length > 0) throw new ConfigurationError(problems);
  return settings;
};

/**
 * Checks the process's environment now, keeping nothing: the local stack, which runs every function in
 * one process, loads the modules that call this before it sets the functions' environment.
 */
export const checkSettings = () => {
  parseSettings(environment());
};

let parsed: Settings | undefined;

/** The process's settings, parsed on first use (after the local stack set its environment) and kept. */
const settings = (): Settings => {
  parsed ??= parseSettings(environment());
  return parsed;
};

export const storageQuotaDefaults = () => settings().storageQuotas;
export const automationQuotaDefaults = () => settings().automationQuotas;
export const recheckEverySeconds = () => settings().recheckEverySeconds;
export const payerRecheckEverySeconds = () => settings().payerRecheckEverySeconds;
export const payerSubscriptionsEverySeconds = () => settings().payerSubscriptionsEverySeconds;
export const webhookUrlPolicy = () => settings().webhookUrlPolicy;
export const payerUrlPolicy = () => settings().payerUrlPolicy;
export const s3ForcePathStyle = () => settings().s3ForcePathStyle;
export const s3VerifiesChecksums = () => settings().s3VerifiesChecksums;
