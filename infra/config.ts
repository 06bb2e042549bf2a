import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import { BROWSER_CONCURRENCY } from '#lib/runs/state-machines';

/**
 * Deployment settings, from CDK context (`cdk deploy -c stage=dev -c logLevel=DEBUG`, or cdk.json's
 * `context`), each with a default safe for production: docs/observability.md, "Configuration".
 */
export interface ServiceConfig {
  /** Names the dashboard and prefixes alarm names; `prod` (the default) forbids `removalPolicy=destroy`. */
  stage: string;
  /** The functions' log level (POWERTOOLS_LOG_LEVEL): DEBUG, INFO (default), WARN or ERROR. */
  logLevel: LogLevelName;
  /** Retention of the functions' and state machines' log groups, in days (default 365). */
  logRetention: RetentionDays;
  /** Alarms go to this existing SNS topic; otherwise to a topic of the monitoring stack. */
  alarmTopicArn?: string;
  /** Subscribed by email to the monitoring stack's topic (ignored with alarmTopicArn). */
  alarmEmail?: string;
  /** p99 latency per route above which its alarm fires (default 5000 ms; the gateway gives up at 29 s). */
  latencyP99Ms: number;
  /**
   * `retain` (default): every stateful resource is kept when its stack is deleted. `destroy`, for
   * throwaway dev stacks only: log groups, keys, queues, topics and the table go with the stack.
   */
  removalPolicy: 'retain' | 'destroy';
  /**
   * Reserved concurrency of each browser worker function (FillPortalForm, CheckPortalStatus; default
   * 10): at most this many Chromium of 2 GB, each with a portal login, per function. It is also their
   * ceiling; a run beyond it waits for a worker (docs/rpa.md). The account must keep 100 unreserved.
   */
  browserConcurrency: number;
  /**
   * Whether the API's methods require a usage-plan key (default true): API Gateway applies a client's
   * usage plan (throttle, daily quota) only to such methods and answers 403 to a request whose
   * authorizer named no key. `false` only for a deployment made before this default, until every
   * client has its key (docs/deploy.md, "Usage keys on an existing deployment").
   */
  usageKeysRequired: boolean;
  /**
   * The API's public base URL (https, no query), which payers POST PAS notifications under
   * (docs/payer-api.md, "Subscriptions"): the deployment's stable address, such as its custom domain, known
   * before deploying. Unset: no PAS subscription is made, and re-checks alone read pended results.
   */
  publicApiBaseUrl?: string;
}

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
type LogLevelName = (typeof LOG_LEVELS)[number];

export const DEFAULT_CONFIG: ServiceConfig = {
  stage: 'prod',
  logLevel: 'INFO',
  logRetention: RetentionDays.ONE_YEAR,
  latencyP99Ms: 5000,
  removalPolicy: 'retain',
  browserConcurrency: BROWSER_CONCURRENCY,
  usageKeysRequired: true,
};

const PRODUCTION_STAGES = ['prod', 'production'];
const isProduction = (config: ServiceConfig) => PRODUCTION_STAGES.includes(config.stage);

const invalid = (key: string, value: unknown, expected: string) =>
  new Error(`CDK context ${key}=${JSON.stringify(value)}: expected ${expected}.`);

/** The settings of the app `scope` belongs to; a value that makes no sense fails synthesis. */
export const serviceConfigOf = (scope: IConstruct): ServiceConfig => {
  const context = (key: string): unknown => scope.node.tryGetContext(key);
  const text = (key: string) => {
    const value = context(key);
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') throw invalid(key, value, 'a string');
    return value;
  };

  const stage = text('stage') ?? DEFAULT_CONFIG.stage;
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) throw invalid('stage', stage, 'lower-case letters, digits and dashes');

  const logLevel = (text('logLevel')?.toUpperCase() ?? DEFAULT_CONFIG.logLevel) as LogLevelName;
  if (!LOG_LEVELS.includes(logLevel)) throw invalid('logLevel', logLevel, LOG_LEVELS.join(', '));

  const days = Number(context('logRetentionDays') ?? DEFAULT_CONFIG.logRetention);
  // CloudWatch Logs accepts a fixed set of periods; RetentionDays lists them (INFINITE aside).
  const retentions = Object.values(RetentionDays).filter((value) => typeof value === 'number') as number[];
  if (!retentions.includes(days) || days === RetentionDays.INFINITE) {
    throw invalid('logRetentionDays', context('logRetentionDays'), `one of ${retentions.filter(Boolean).join(', ')}`);
  }

  const latencyP99Ms = Number(context('latencyP99Ms') ?? DEFAULT_CONFIG.latencyP99Ms);
  if (!Number.isFinite(latencyP99Ms) || latencyP99Ms <= 0) {
    throw invalid('latencyP99Ms', context('latencyP99Ms'), 'a positive number');
  }

  const browserConcurrency = Number(context('browserConcurrency') ?? DEFAULT_CONFIG.browserConcurrency);
  if (!Number.isInteger(browserConcurrency) || browserConcurrency < 1 || browserConcurrency > 1000) {
    throw invalid('browserConcurrency', context('browserConcurrency'), 'a whole number from 1 to 1000');
  }

  // `-c usageKeysRequired=false` arrives as a string, cdk.json's as a boolean.
  const usageKeys = context('usageKeysRequired') ?? DEFAULT_CONFIG.usageKeysRequired;
  if (![true, false, 'true', 'false'].includes(usageKeys as string | boolean)) {
    throw invalid('usageKeysRequired', usageKeys, 'true or false');
  }

  const alarmTopicArn = text('alarmTopicArn');
  if (alarmTopicArn && !/^arn:aws[\w-]*:sns:[\w-]+:\d{12}:[\w-]+$/.test(alarmTopicArn)) {
    throw invalid('alarmTopicArn', alarmTopicArn, 'an SNS topic ARN');
  }
  const alarmEmail = text('alarmEmail');
  if (alarmEmail && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail)) {
    throw invalid('alarmEmail', alarmEmail, 'an email address');
  }

  const removalPolicy = text('removalPolicy') ?? DEFAULT_CONFIG.removalPolicy;
  if (removalPolicy !== 'retain' && removalPolicy !== 'destroy') {
    throw invalid('removalPolicy', removalPolicy, 'retain or destroy');
  }
  const publicApiBaseUrl = text('publicApiBaseUrl');
  if (publicApiBaseUrl && !/^https:\/\/[^\s?#]+$/.test(publicApiBaseUrl)) {
    throw invalid('publicApiBaseUrl', publicApiBaseUrl, 'an https URL without query or fragment');
  }
  const config: ServiceConfig = {
    stage,
    logLevel,
    logRetention: days as RetentionDays,
    latencyP99Ms,
    removalPolicy,
    browserConcurrency,
    usageKeysRequired: usageKeys === true || usageKeys === 'true',
    ...(alarmTopicArn ? { alarmTopicArn } : {}),
    ...(alarmEmail ? { alarmEmail } : {}),
    ...(publicApiBaseUrl ? { publicApiBaseUrl } : {}),
  };
  if (removalPolicy === 'destroy' && isProduction(config)) {
    throw new Error(`CDK context removalPolicy=destroy is refused for stage ${stage}: production data is retained.`);
  }
  return config;
};
