/**
 * Admin CLI: `npm run admin -- <command> [args]`, JSON on stdout.
 *
 * Target: the running local stack by default (found through .local/stack.json, written by
 * `npm start`; LOCAL_STATE_DIR moves it), or AWS with ADMIN_TARGET=aws, TABLE_NAME and the usual
 * AWS credential chain (and REST_API_ID, so that revoke-api-key and delete-client flush the authorizer cache).
 * Tenants are provisioned by operators only: none of this is an API route.
 * npm prints its own banner on stdout; `npm run -s admin -- …` leaves only the JSON.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type AdminTarget, adminTarget } from './admin-config.ts';

const usage = `Usage: npm run admin -- <command>
  create-client <name> [--expires-in <duration>] [--rate <n> --burst <n> [--quota-per-day <n>]]
                                                         → {"clientId","keyId","apiKey"[,"expiresAt"][,limits]}
  set-client-limits <clientId> --rate <n> --burst <n> [--quota-per-day <n>]
                                                         → {"clientId","rateLimit","burstLimit"[,"quotaPerDay"]}
  set-client-limits <clientId> --default                 (back to the defaults)
                                                         on AWS with USAGE_PLAN_ID: + "usagePlanId" (the client's own plan)
  set-storage-quotas <clientId> [--attachment-bytes <n>] [--portal-accounts-per-organization <n>]
                     [--payer-connections-per-organization <n>]
                                                         → {"clientId"[,"attachmentBytesQuota"][,"portalAccountsQuota"]
                                                         [,"payerConnectionsQuota"]}
  set-storage-quotas <clientId> --default                (back to the default quotas)
  set-automation-quotas <clientId> [--runs-per-hour <n>] [--runs-per-day <n>] [--runs-in-flight <n>]
                                                         → {"clientId"[,"automationRunsPerHour"]…}
  set-automation-quotas <clientId> --default             (back to the defaults: 200/hour, 1000/day, 50 in flight)
  set-rechecks <clientId> --off | --every-seconds <n> | --default
                                                         → {"clientId","rechecks":"off"|"on"[,"recheckIntervalSeconds"]}
                                                         (scheduled re-checks of undecided authorizations: docs/rechecks.md)
  attach-usage-plan-key <clientId>                       → {"clientId","apiGatewayKeyId"} (AWS, USAGE_PLAN_ID)
  create-api-key <clientId> [--expires-in <duration>] [--organization <organizationId>]
                                                         → {"clientId","keyId","apiKey"[,"expiresAt"][,"organizationId"]}
  list-api-keys <clientId>                               → {"clientId","apiKeys":[{"keyId","state",…}]}
  revoke-api-key <clientId> <keyId>                      → {"revoked":true,…,"authorizerCacheFlushed"}
  revoke-api-key <apiKey>                                (a leaked key whose id is not at hand)
  delete-client <clientId>                               → {"clientId","deletedAt","revokedKeys",
                                                         "usagePlanKeyDeleted","usagePlanDeleted","authorizerCacheFlushed"}
                                                         (keeps the client's data: docs/security.md, "Offboarding a client")
  create-organization <clientId> <name>                  → {"organizationId"}
  create-client-user <clientId> <organizationId> <clientUserId>
  reencrypt-portal-secrets [--client <clientId>]         → {"found","resealed","changedConcurrently","failed"}
  backfill-portal-account-indexes                        → {"scanned","rewritten","searchIndexed"} (once, after
                                                         deploying the filter or search indexes: docs/data-model.md;
                                                         scans the table)
  rotate-payer-signing-key <clientId>                    → {"clientId","keySetId","kid","activeFrom","discardedKids"[,"jwksUri"]}
                                                         (creates the client's first payer signing key, or the next one:
                                                         published now, signing from activeFrom; on AWS a KMS key)
  list-payer-signing-keys <clientId>                     → {"clientId","keySetId"[,"jwksUri"],"keys":[{"kid","state",…}]}
                                                         (public parts only; docs/payer-api.md)
  set-payer-endpoint <payerId> --fhir-base-url <url> --token-url <url> [--name <text>] [--scope <scopes>]
                     [--decision-timeframes cms-0057-f|none] [--subscriptions rest-hook|none]
                     [--attachment-submission claim-update|cdex]
                                                         → {"payerId","name","fhirBaseUrl","tokenUrl","scope",
                                                         "decisionTimeframes","subscriptions","attachmentSubmission",…}
                                                         (creates or replaces the payer's API: docs/payer-connections.md)
  list-payer-endpoints                                   → {"payerEndpoints":[…]} (in payer-id order)
  delete-payer-endpoint <payerId>                        → {"payerId","deleted":true}
  replay-events --since <time> [--client <clientId>] [--dry-run]
                                                         → {"since","dryRun","via","clients","found","replayed",
                                                         "byType":{…},"notReplayed":[eventId…]} (events since <time>
                                                         handed to delivery again, ids and counts only; exit 1 when
                                                         "notReplayed" is not empty: run it again. docs/events.md,
                                                         "Replaying events")
  backfill-replay-indexes                                → {"scanned","eventsIndexed","clientsIndexed"} (once, after
                                                         deploying replay-events: docs/events.md; scans the table)
<duration>: whole hours or days, 1h to 365d (e.g. 12h, 90d); keys do not expire without it.
--organization: the key reaches only that organization of the client (docs/security.md); the whole client without it.
--since: a time, ISO 8601 with its zone (2026-03-01T10:00:00Z) or a date (UTC), or a duration back from now in
whole minutes, hours or days (90m, 6h, 2d). Outbox items are kept 7 days. Without --client, every client's events;
--dry-run counts them and hands none over. On AWS (ADMIN_TARGET=aws) the events go on the service-review bus
(events:PutEvents); locally, back to the running stack's relay.
--fhir-base-url, --token-url: https; on the local stack also http on a loopback host (the local PAS payer). A
field not given to set-payer-endpoint is back at its default: no name; --scope "system/Claim.write
system/ClaimResponse.read" (space-separated, system/ scopes); --decision-timeframes cms-0057-f (submissions get a
decision deadline, 72 h urgent or 7 days; none: a payer the rule does not cover, docs/payer-api.md); --subscriptions
none (rest-hook: one PAS subscription per connection, made at its first pended answer; docs/payer-api.md);
--attachment-submission claim-update (requested documents go in a PAS claim update; cdex: by CDex
$submit-attachment, docs/payer-api.md).
reencrypt-portal-secrets: re-seals portal secrets stored before the Encryption SDK (v1), all clients' or one's; run it
again until "found" is 0. Needs the secrets key's Decrypt: the local stack's key file (docs/security.md).
--rate, --burst: the client's own requests per second (1 to 10000) and burst (1 to 5000), both or neither;
--quota-per-day: requests per UTC day (the local gateway's and, on AWS, the client's own usage plan's).
docs/security.md, "Throttling and quotas"; storage quotas: docs/security.md, "Quotas".
Target: the local stack (npm start) by default; ADMIN_TARGET=aws with TABLE_NAME for AWS, and REST_API_ID
(API_STAGE, default prod) so that revoke-api-key and delete-client flush the stage's authorizer cache; with
USAGE_PLAN_ID (the UsagePlanId output), create-client also gives the new client its usage plan key. On AWS,
delete-client deletes the client's API Gateway keys and its own usage plan. With API_URL (the ApiUrl output, or the
API's domain), the payer key commands print the client's jwksUri.`;

const fail = (message: string): never => {
  process.stderr.write(`${JSON.stringify({ error: message })}\n`);
  process.exit(1);
};

/** The target (scripts/admin-config.ts), or the CLI's error saying what is missing. */
const targetOrFail = (): AdminTarget => {
  try {
    return adminTarget();
  } catch (error) {
    return fail((error as Error).message);
  }
};

/** Options that take a whole number, by the field they set; --default clears them (see each command). */
const limitOptions = { rate: 'rateLimit', burst: 'burstLimit', 'quota-per-day': 'quotaPerDay' } as const;
const quotaOptions = {
  'attachment-bytes': 'attachmentBytesQuota',
  'portal-accounts-per-organization': 'portalAccountsQuota',
  'payer-connections-per-organization': 'payerConnectionsQuota',
} as const;
const automationOptions = {
  'runs-per-hour': 'automationRunsPerHour',
  'runs-per-day': 'automationRunsPerDay',
  'runs-in-flight': 'automationRunsInFlight',
} as const;
const wholeNumberOption = { type: 'string' } as const;
/** Every option (node:util parseArgs: `--name value` or `--name=value`; anything else is refused). */
const options = {
  'expires-in': { type: 'string' },
  organization: { type: 'string' },
  client: { type: 'string' },
  default: { type: 'boolean' },
  help: { type: 'boolean' },
  rate: wholeNumberOption,
  burst: wholeNumberOption,
  'quota-per-day': wholeNumberOption,
  'attachment-bytes': wholeNumberOption,
  'portal-accounts-per-organization': wholeNumberOption,
  'payer-connections-per-organization': wholeNumberOption,
  'runs-per-hour': wholeNumberOption,
  'runs-per-day': wholeNumberOption,
  'runs-in-flight': wholeNumberOption,
  off: { type: 'boolean' },
  'every-seconds': wholeNumberOption,
  'fhir-base-url': { type: 'string' },
  'token-url': { type: 'string' },
  name: { type: 'string' },
  scope: { type: 'string' },
  'decision-timeframes': { type: 'string' },
  'attachment-submission': { type: 'string' },
  subscriptions: { type: 'string' },
  since: { type: 'string' },
  'dry-run': { type: 'boolean' },
} as const;
/** What an option's value is, for the message when it has none (other than the whole numbers'). */
const valueOfOption: Partial<Record<string, string>> = {
  'expires-in': 'whole hours or days (e.g. 12h, 90d), from 1h to 365d',
  organization: 'an organization id',
  client: 'a client id',
  'fhir-base-url': 'a URL',
  'token-url': 'a URL',
  name: 'a text',
  scope: 'space-separated scopes',
  'decision-timeframes': 'cms-0057-f or none',
  'attachment-submission': 'claim-update or cdex',
  subscriptions: 'rest-hook or none',
  since: 'a time or a duration back from now (e.g. 2026-03-01T10:00:00Z, 6h)',
};

/** parseArgs' refusals (an unknown option, a value missing or given to a flag), in this CLI's words. */
const refuseArguments = (error: Error & { code?: string }): never => {
  const name = /'(-[^' ]+)/.exec(error.message)?.[1];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && name) return fail(`Unknown option ${name}.\n${usage}`);
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && name) {
    const option = name.slice(2) as keyof typeof options;
    const value = options[option]?.type === 'boolean' ? 'no value' : (valueOfOption[option] ?? 'a whole number');
    return fail(`${name} takes ${value}.\n${usage}`);
  }
  return fail(`${error.message}\n${usage}`);
};

const parsed = (() => {
  try {
    return parseArgs({ args: process.argv.slice(2), options, allowPositionals: true, strict: true });
  } catch (error) {
    return refuseArguments(error as Error);
  }
})();
const { values } = parsed;
const [command, ...args] = parsed.positionals;

/** The options of set-payer-endpoint alone. */
const endpointOptions = [
  'fhir-base-url',
  'token-url',
  'name',
  'scope',
  'decision-timeframes',
  'attachment-submission',
  'subscriptions',
] as const;

const wholeNumber = (name: string, value: string) => {
  if (!/^\d{1,12}$/.test(value)) fail(`--${name} takes a whole number.\n${usage}`);
  return Number(value);
};
/** The whole-number options among `names` that were given, as `{ field: number }`. */
const numbersOf = <Name extends keyof typeof values, Field extends string>(names: Readonly<Record<Name, Field>>) => {
  const given: Partial<Record<Field, number>> = {};
  for (const [name, field] of Object.entries(names) as [Name, Field][]) {
    const value = values[name];
    if (typeof value === 'string') given[field] = wholeNumber(name, value);
  }
  return given;
};
const limits = numbersOf(limitOptions);
const storageQuotas = numbersOf(quotaOptions);
const automationQuotas = numbersOf(automationOptions);
const defaultLimits = values.default === true;
const expiresIn = values['expires-in'];
const organization = values.organization;
const clientOption = values.client;
if (organization !== undefined && organization.trim() === '')
  fail(`--organization takes an organization id.\n${usage}`);
if (clientOption !== undefined && clientOption.trim() === '') fail(`--client takes a client id.\n${usage}`);

const need = (
  count: number,
  { expiring = false, restricting = false, limiting = false, storing = false, ofClient = false } = {},
) => {
  if (args.length !== count || args.some((arg) => arg.trim() === ''))
    fail(`${command} takes ${count} argument(s).\n${usage}`);
  if (expiresIn !== undefined && !expiring) fail(`${command} takes no --expires-in.\n${usage}`);
  if (organization !== undefined && !restricting) fail(`${command} takes no --organization.\n${usage}`);
  if (clientOption !== undefined && !ofClient) fail(`${command} takes no --client.\n${usage}`);
  if ((Object.keys(limits).length > 0 || (defaultLimits && !storing)) && !limiting)
    fail(`${command} takes no --rate, --burst, --quota-per-day or --default.\n${usage}`);
  if (Object.keys(automationQuotas).length > 0 && command !== 'set-automation-quotas')
    fail(`${command} takes no --runs-per-hour, --runs-per-day or --runs-in-flight.\n${usage}`);
  if ((values.off || values['every-seconds'] !== undefined) && command !== 'set-rechecks')
    fail(`${command} takes no --off or --every-seconds.\n${usage}`);
  if (Object.keys(storageQuotas).length > 0 && !storing)
    fail(
      `${command} takes no --attachment-bytes, --portal-accounts-per-organization or --payer-connections-per-organization.\n${usage}`,
    );
  if (endpointOptions.some((name) => values[name] !== undefined) && command !== 'set-payer-endpoint')
    fail(
      `${command} takes no --fhir-base-url, --token-url, --name, --scope, --decision-timeframes, --subscriptions or --attachment-submission.\n${usage}`,
    );
  if ((values.since !== undefined || values['dry-run']) && command !== 'replay-events')
    fail(`${command} takes no --since or --dry-run.\n${usage}`);
  return args;
};

if (!command || command === 'help' || values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(command || values.help ? 0 : 1);
}

const target = targetOrFail();
// Imported after the target is known: the SDK clients read their endpoints at module scope.
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
const { provisioning } = await import('#lib/tenancy/provisioning');
const admin = provisioning(dynamoTenantStore);

/** Revocation takes effect at once in the table; the gateway's cached answers are flushed on AWS. */
const flushAfterRevocation = async () => {
  const { flushAuthorizerCache, noCacheToFlush } = await import('#lib/tenancy/authorizer-cache');
  if (target.kind !== 'aws') return noCacheToFlush('local');
  const { restApiId, apiStage } = target;
  if (!restApiId) return noCacheToFlush('no-rest-api-id');
  const { APIGatewayClient } = await import('@aws-sdk/client-api-gateway');
  return flushAuthorizerCache(new APIGatewayClient({}), { restApiId, stageName: apiStage });
};

/**
 * On AWS with USAGE_PLAN_ID: an API Gateway key for the client in the usage plan, its value stored on
 * the Client item for the authorizer to return. The value is not printed: nobody needs it.
 */
const attachUsagePlanKey = async (clientId: string) => {
  const usagePlanId = target.kind === 'aws' ? target.usagePlanId : undefined;
  if (!usagePlanId) {
    return fail('attach-usage-plan-key needs ADMIN_TARGET=aws and USAGE_PLAN_ID (the local gateway needs no key).');
  }
  const client = await dynamoTenantStore.getClient(clientId);
  if (!client) return fail(`Unknown client ${clientId}`);
  if (client.deletedAt) return fail(`Client ${clientId} is deleted: it gets no usage plan key`);
  const { createUsagePlanKey } = await import('#lib/tenancy/usage-plan-keys');
  const { APIGatewayClient } = await import('@aws-sdk/client-api-gateway');
  const { apiGatewayKeyId, usageIdentifierKey } = await createUsagePlanKey(new APIGatewayClient({}), {
    clientId,
    usagePlanId,
  });
  await dynamoTenantStore.setUsageIdentifierKey(clientId, usageIdentifierKey);
  return { clientId, apiGatewayKeyId };
};

/**
 * On AWS with USAGE_PLAN_ID, a client's own limits are its own usage plan (created or updated, its key
 * moved there); back on the defaults, its key returns to the default plan and its own plan is deleted.
 * Locally the gateway reads the stored limits itself: nothing more to do.
 */
const applyUsagePlan = async (
  clientId: string,
  stored: { rateLimit?: number; burstLimit?: number; quotaPerDay?: number },
) => {
  const defaultUsagePlanId = target.kind === 'aws' ? target.usagePlanId : undefined;
  if (!defaultUsagePlanId) return {};
  const usageIdentifierKey = await dynamoTenantStore.getUsageIdentifierKey(clientId);
  if (!usageIdentifierKey) {
    return { usagePlanId: null, reason: 'the client has no usage plan key yet: run attach-usage-plan-key' };
  }
  const plans = await import('#lib/tenancy/usage-plan-keys');
  const { DEFAULT_QUOTA_PER_DAY } = await import('#lib/config/defaults');
  const { APIGatewayClient } = await import('@aws-sdk/client-api-gateway');
  const apiGateway = new APIGatewayClient({});
  const { rateLimit, burstLimit, quotaPerDay = DEFAULT_QUOTA_PER_DAY } = stored;
  if (rateLimit === undefined || burstLimit === undefined) {
    return plans.returnToDefaultUsagePlan(apiGateway, { clientId, usageIdentifierKey, defaultUsagePlanId });
  }
  return plans.applyClientUsagePlan(apiGateway, {
    clientId,
    usageIdentifierKey,
    defaultUsagePlanId,
    limits: { rateLimit, burstLimit, quotaPerDay },
  });
};

/**
 * Offboarding: the client is marked deleted and its keys revoked (provisioning), the authorizer's
 * cached answers flushed, and on AWS its API Gateway keys and own usage plan deleted. The two flags
 * say that none of them is left (true on AWS, on every run: a second run finds nothing to delete);
 * locally there is no API Gateway, so both are false.
 */
const deleteClient = async () => {
  const [clientId] = need(1);
  const deleted = await admin.deleteClient(clientId!);
  const flushed = await flushAfterRevocation();
  if (target.kind !== 'aws') {
    return { ...deleted, usagePlanKeyDeleted: false, usagePlanDeleted: false, ...flushed };
  }
  const { deleteClientApiKeys, deleteClientUsagePlan } = await import('#lib/tenancy/usage-plan-keys');
  const { APIGatewayClient } = await import('@aws-sdk/client-api-gateway');
  const apiGateway = new APIGatewayClient({});
  await deleteClientApiKeys(apiGateway, { clientId: clientId! });
  await deleteClientUsagePlan(apiGateway, { clientId: clientId! });
  return { ...deleted, usagePlanKeyDeleted: true, usagePlanDeleted: true, ...flushed };
};

const revoke = async () => {
  // One argument is the compatible form: the key itself. Two are the client and the key's id.
  const [first, keyId] = args.length === 1 ? need(1) : need(2);
  const revoked = keyId ? await admin.revokeApiKey(first!, keyId) : await admin.revokeApiKeyByValue(first!);
  return { ...revoked, ...(await flushAfterRevocation()) };
};

/** The client's JWKS URL, where the API's base URL is known: the local stack's, or API_URL on AWS. */
const jwksUriOf = async (keySetId: string) => {
  const { jwksPathOf } = await import('#lib/payer-api/signing-keys/key-set-id');
  const base =
    target.kind === 'aws'
      ? target.apiUrl
      : (JSON.parse(readFileSync(target.stackFile, 'utf8')) as { baseUrl?: string }).baseUrl;
  return base ? { jwksUri: `${base.replace(/\/+$/, '')}${jwksPathOf(keySetId)}` } : {};
};

/** A payer key command's client: it must exist and not be offboarded. */
const payerKeyClient = async () => {
  const [clientId] = need(1);
  const client = await dynamoTenantStore.getClient(clientId!);
  if (!client) return fail(`Unknown client ${clientId}`);
  if (client.deletedAt) return fail(`Client ${clientId} is deleted: it signs nothing`);
  return clientId!;
};

/**
 * A new payer signing key for the client, in the keeper of the target: KMS on AWS (created with the
 * operator's credentials: no API function may create keys), the local stack's key files otherwise.
 */
const rotatePayerSigningKey = async () => {
  const clientId = await payerKeyClient();
  const { rotatePayerSigningKey: rotate } = await import('#lib/payer-api/signing-keys/rotation');
  const { dynamoPayerKeySetStore } = await import('#lib/payer-api/signing-keys/dynamo-key-set-store');
  const { keeperOf } = await import('#lib/payer-api/signing-keys/keepers');
  const rotated = await rotate({
    store: dynamoPayerKeySetStore,
    keeper: keeperOf(target.kind === 'aws' ? 'kms' : 'local'),
    clientId,
  });
  return { ...rotated, ...(await jwksUriOf(rotated.keySetId)) };
};

const listPayerSigningKeys = async () => {
  const clientId = await payerKeyClient();
  const { dynamoPayerKeySetStore } = await import('#lib/payer-api/signing-keys/dynamo-key-set-store');
  const { keyListingOf } = await import('#lib/payer-api/signing-keys/key-sets');
  const { keySetIdOf } = await import('#lib/payer-api/signing-keys/key-set-id');
  const keySet = await dynamoPayerKeySetStore.ofClient(clientId);
  const keySetId = keySetIdOf(clientId);
  return {
    clientId,
    keySetId,
    ...(await jwksUriOf(keySetId)),
    keys: keySet ? keyListingOf(keySet, new Date()) : [],
  };
};

/**
 * The operators' directory of payer APIs (docs/payer-connections.md, "Payer endpoints"), under the
 * target's URL policy: AWS takes https only, the local stack also http on a loopback host.
 */
const payerEndpointDirectory = async () => {
  const { payerEndpointDirectory } = await import('#lib/payer-endpoints/payer-endpoints');
  const { dynamoPayerEndpointStore } = await import('#lib/payer-endpoints/dynamo-payer-endpoint-store');
  const urlPolicy = target.kind === 'aws' ? ('public-https' as const) : ('local' as const);
  return payerEndpointDirectory({ store: dynamoPayerEndpointStore, urlPolicy: () => urlPolicy });
};

const setPayerEndpoint = async () => {
  const [payerId] = need(1);
  const fhirBaseUrl = values['fhir-base-url'];
  const tokenUrl = values['token-url'];
  if (fhirBaseUrl === undefined || tokenUrl === undefined) {
    return fail(`set-payer-endpoint takes --fhir-base-url and --token-url.\n${usage}`);
  }
  return (await payerEndpointDirectory()).set({
    payerId: payerId!,
    fhirBaseUrl,
    tokenUrl,
    name: values.name,
    scope: values.scope,
    decisionTimeframes: values['decision-timeframes'],
    attachmentSubmission: values['attachment-submission'],
    subscriptions: values.subscriptions,
  });
};

/**
 * The outbox's events since a time, one client's or every client's (the client directory), handed over
 * again as a new outbox item's are: on AWS to the event bus, locally to the running stack's relay.
 * Delivery records one delivery per event and subscription, so what was delivered is not sent again.
 */
const replayEvents = async () => {
  need(0, { ofClient: true });
  if (values.since === undefined) return fail(`replay-events takes --since <time>.\n${usage}`);
  const replay = await import('#lib/events/replay');
  let since: string;
  try {
    since = replay.replaySinceOf(values.since, new Date());
  } catch (error) {
    return fail((error as Error).message);
  }
  if (clientOption !== undefined && !(await dynamoTenantStore.getClient(clientOption))) {
    return fail(`Unknown client ${clientOption}`);
  }
  const { dynamoOutboxStore } = await import('#lib/events/dynamo-outbox-store');
  const handOver =
    target.kind === 'aws'
      ? (await import('#lib/events/bus-hand-over')).busHandOver()
      : replay.relayHandOver(dynamoOutboxStore);
  const summary = await replay.replayEvents(dynamoOutboxStore, handOver, {
    since,
    clientIds: clientOption === undefined ? dynamoTenantStore.clientIds() : [clientOption],
    dryRun: values['dry-run'] === true,
  });
  if (summary.notReplayed.length > 0) process.exitCode = 1;
  return summary;
};

const commands: Record<string, () => Promise<unknown>> = {
  'create-client': async () => {
    const [name] = need(1, { expiring: true, limiting: true });
    if (defaultLimits)
      fail(`create-client takes no --default: a new client is on the defaults without --rate.\n${usage}`);
    const created = await admin.createClient(name!, { expiresIn, limits });
    if (target.kind === 'aws' && !target.usagePlanId) {
      // Usage keys are required by default (docs/deploy.md): without one, every call of the client is a 403.
      process.stderr.write(
        `warning: no USAGE_PLAN_ID, so ${created.clientId} has no usage plan key; where keys are required, run attach-usage-plan-key.\n`,
      );
    }
    if (target.kind !== 'aws' || !target.usagePlanId) return created;
    const { apiGatewayKeyId } = await attachUsagePlanKey(created.clientId);
    const ownPlan = Object.keys(limits).length > 0 ? await applyUsagePlan(created.clientId, limits) : {};
    return { ...created, apiGatewayKeyId, ...ownPlan };
  },
  'attach-usage-plan-key': async () => attachUsagePlanKey(need(1)[0]!),
  'set-client-limits': async () => {
    const [clientId] = need(1, { limiting: true });
    // Replacing the limits with nothing is a reset: asked for explicitly, so a forgotten option is not one.
    if (defaultLimits === Object.keys(limits).length > 0) {
      fail(`set-client-limits takes --rate and --burst (and --quota-per-day), or --default alone.\n${usage}`);
    }
    const stored = await admin.setClientLimits(clientId!, limits);
    return { ...stored, ...(await applyUsagePlan(clientId!, stored)) };
  },
  'set-storage-quotas': async () => {
    const [clientId] = need(1, { storing: true });
    if (defaultLimits === Object.keys(storageQuotas).length > 0) {
      fail(
        `set-storage-quotas takes --attachment-bytes, --portal-accounts-per-organization and/or --payer-connections-per-organization, or --default alone.\n${usage}`,
      );
    }
    return admin.setStorageQuotas(clientId!, storageQuotas);
  },
  'set-automation-quotas': async () => {
    const [clientId] = need(1, { storing: true });
    if (Object.keys(storageQuotas).length > 0) fail(`set-automation-quotas takes no storage quota.\n${usage}`);
    if (defaultLimits === Object.keys(automationQuotas).length > 0) {
      fail(
        `set-automation-quotas takes --runs-per-hour, --runs-per-day and/or --runs-in-flight, or --default alone.\n${usage}`,
      );
    }
    return admin.setAutomationQuotas(clientId!, automationQuotas);
  },
  'set-rechecks': async () => {
    const [clientId] = need(1, { storing: true });
    const every = values['every-seconds'];
    if ([values.off === true, every !== undefined, defaultLimits].filter(Boolean).length !== 1) {
      fail(`set-rechecks takes one of --off, --every-seconds <n> or --default.\n${usage}`);
    }
    return admin.setRecheckSettings(clientId!, {
      ...(values.off ? { rechecks: 'off' as const } : {}),
      ...(every !== undefined ? { recheckIntervalSeconds: wholeNumber('every-seconds', every) } : {}),
    });
  },
  'create-api-key': async () =>
    admin.createApiKey(need(1, { expiring: true, restricting: true })[0]!, undefined, {
      expiresIn,
      organizationId: organization,
    }),
  'list-api-keys': async () => admin.listApiKeys(need(1)[0]!),
  'revoke-api-key': revoke,
  'delete-client': deleteClient,
  'create-organization': async () => {
    const [clientId, name] = need(2);
    return admin.createOrganization(clientId!, name!);
  },
  'create-client-user': async () => {
    const [clientId, organizationId, clientUserId] = need(3);
    return admin.createClientUser(clientId!, organizationId!, clientUserId!);
  },
  'reencrypt-portal-secrets': async () => {
    need(0, { ofClient: true });
    if (clientOption !== undefined && !(await dynamoTenantStore.getClient(clientOption))) {
      return fail(`Unknown client ${clientOption}`);
    }
    const { CURRENT_ENVELOPE_VERSION } = await import('#lib/crypto/envelope');
    const { secretsKeyring } = await import('#lib/crypto/secrets-keyring');
    const { portalAccountsSealedBefore } = await import('#lib/portal-accounts/dynamo-envelope-scan');
    const { dynamoPortalAccountStore } = await import('#lib/portal-accounts/dynamo-portal-account-store');
    const { resealPortalSecrets } = await import('#lib/portal-accounts/secret-migration');
    return resealPortalSecrets({
      accounts: portalAccountsSealedBefore(CURRENT_ENVELOPE_VERSION, clientOption),
      store: dynamoPortalAccountStore,
      keyring: secretsKeyring(),
    });
  },
  'rotate-payer-signing-key': rotatePayerSigningKey,
  'list-payer-signing-keys': listPayerSigningKeys,
  'set-payer-endpoint': setPayerEndpoint,
  'list-payer-endpoints': async () => {
    need(0);
    return { payerEndpoints: await (await payerEndpointDirectory()).list() };
  },
  'delete-payer-endpoint': async () => {
    const [payerId] = need(1);
    await (await payerEndpointDirectory()).remove(payerId!);
    return { payerId, deleted: true };
  },
  'replay-events': replayEvents,
  'backfill-replay-indexes': async () => {
    need(0);
    const { backfillReplayIndexes } = await import('#lib/events/dynamo-replay-indexes');
    return backfillReplayIndexes();
  },
  'backfill-portal-account-indexes': async () => {
    need(0);
    const { backfillPortalAccountIndexes } = await import('#lib/portal-accounts/dynamo-portal-account-store');
    return backfillPortalAccountIndexes();
  },
};

const run = commands[command] ?? (() => fail(`Unknown command ${command}.\n${usage}`));
try {
  process.stdout.write(`${JSON.stringify(await run())}\n`);
} catch (error) {
  const { code, message } = error as Error & { code?: string };
  fail(code === 'ECONNREFUSED' ? 'The local stack is not running: start it with npm start.' : message);
}
