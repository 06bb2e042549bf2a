import type { Extension, OperationOutcomeIssue, Subscription, SubscriptionChannel } from '@medplum/fhirtypes';

/*
 * The Subscription a client sends (PAS Subscription profile over the R4 Subscriptions Backport: ClaimOperation.fsh,
 * specification.md "Subscription") and what the payer keeps of it. Checked beyond base R4 (fhir-validation.ts):
 * the PAS topic as criteria, the backport's filter criteria naming the client itself (spec-58, spec-59), a
 * rest-hook channel (spec-56) to an https endpoint (http on loopback only), FHIR JSON with full-resource
 * content (spec-62), an end in the future, the heartbeat period and timeout, headers the payer can send.
 */
export const PAS_TOPIC = 'http://hl7.org/fhir/us/davinci-pas/SubscriptionTopic/PASSubscriptionTopic';
const PAS_PROFILE = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/profile-subscription';
export const BACKPORT = 'http://hl7.org/fhir/uv/subscriptions-backport/StructureDefinition/';
const FILTER = `${BACKPORT}backport-filter-criteria`;
const CONTENT = `${BACKPORT}backport-payload-content`;
const HEARTBEAT = `${BACKPORT}backport-heartbeat-period`;
const TIMEOUT = `${BACKPORT}backport-timeout`;

/** R4 keeps the backport's filter and content as extensions of primitives (`_criteria`, `_payload`). */
type Primitive = { extension?: Extension[] };
export type BackportSubscription = Subscription & {
  _criteria?: Primitive;
  channel: SubscriptionChannel & { _payload?: Primitive };
};

/** What the payer keeps of a Subscription: a create or an update makes these. */
export interface SubscriptionTerms {
  /** The client's organization identifiers the filter names (each is the client's own client_id). */
  orgIdentifiers: string[];
  endpoint: string;
  /** `Name: value` lines, sent as headers with every notification. */
  headers: string[];
  end: string;
  heartbeatPeriodSeconds?: number;
  timeoutSeconds: number;
  reason: string;
}

const MAX_HEADERS = 10;
const MAX_HEARTBEAT_SECONDS = 86_400;
const DEFAULT_TIMEOUT_SECONDS = 10;
const MAX_TIMEOUT_SECONDS = 60;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** A header the payer sets itself, or that would change how the request is framed. */
const OWN_HEADERS = new Set(['host', 'content-type', 'content-length', 'transfer-encoding', 'connection']);
const HEADER = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}):[ \t]*([\x20-\x7E]{1,4096})$/;
/** `org-identifier=A,B` (the IG's example spells it `orgIdentifier`; the backport's R4 form may lead with `Type?`). */
const ORG_FILTER = /^(?:[A-Z][A-Za-z]{0,63}\?)?(?:org-identifier|orgIdentifier)=([^&=?]+)$/;

type Problem = OperationOutcomeIssue;
const problem = (expression: string, text: string, code: Problem['code'] = 'invariant'): Problem => ({
  severity: 'error',
  code,
  details: { text },
  expression: [expression],
});

const extensionOf = (extensions: readonly Extension[] | undefined, url: string) =>
  (extensions ?? []).filter((extension) => extension?.url === url);

/** An endpoint the payer may post to: https anywhere, http only on this machine; no credentials or fragment. */
const endpointProblem = (raw: string | undefined): string | undefined => {
  if (!raw || raw.length > 2048 || !URL.canParse(raw)) return 'channel.endpoint is an absolute URL.';
  const url = new URL(raw);
  const loopback = LOOPBACK.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.username || url.password || url.hash) return 'channel.endpoint carries no credentials or fragment.';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    return 'channel.endpoint is https (http only on a loopback host).';
  }
  return undefined;
};

/** The organization identifiers of the filter criteria, or a problem; every one must be the client's own. */
function filterProblems(subscription: BackportSubscription, clientId: string, terms: Partial<SubscriptionTerms>) {
  const filters = extensionOf(subscription._criteria?.extension, FILTER);
  if (filters.length === 0) {
    return [problem('Subscription.criteria', 'The filter criteria (backport-filter-criteria) name org-identifier.')];
  }
  const identifiers = filters.map((filter) => ORG_FILTER.exec(filter.valueString?.trim() ?? '')?.[1]);
  if (identifiers.some((found) => found === undefined)) {
    return [problem('Subscription.criteria', 'The only filter this payer takes is org-identifier=<identifier>.')];
  }
  terms.orgIdentifiers = identifiers.flatMap((found) => found!.split(',').map((value) => value.trim()));
  if (terms.orgIdentifiers.some((value) => value !== clientId)) {
    // spec-59: a sending system's authorizations are watched only by that sending system.
    return [problem('Subscription.criteria', 'org-identifier names another organization than yours.', 'forbidden')];
  }
  return [];
}

function channelProblems(channel: BackportSubscription['channel'], terms: Partial<SubscriptionTerms>): Problem[] {
  const problems: Problem[] = [];
  if (channel.type !== 'rest-hook') problems.push(problem('Subscription.channel.type', 'The channel is rest-hook.'));
  const endpoint = endpointProblem(channel.endpoint);
  if (endpoint) problems.push(problem('Subscription.channel.endpoint', endpoint));
  else terms.endpoint = new URL(channel.endpoint!).href;
  if (channel.payload !== 'application/fhir+json') {
    problems.push(problem('Subscription.channel.payload', 'The payload is application/fhir+json.'));
  }
  const content = extensionOf(channel._payload?.extension, CONTENT);
  if (content.length !== 1 || content[0]!.valueCode !== 'full-resource') {
    problems.push(problem('Subscription.channel.payload', 'The payload content is full-resource (PAS spec-62).'));
  }
  const headers = channel.header ?? [];
  const bad = headers.findIndex((line) => {
    const name = HEADER.exec(line)?.[1]?.toLowerCase();
    return name === undefined || OWN_HEADERS.has(name);
  });
  if (headers.length > MAX_HEADERS || bad >= 0) {
    problems.push(problem('Subscription.channel.header', `At most ${MAX_HEADERS} headers, each "Name: value".`));
  }
  terms.headers = headers;
  return [...problems, ...numberProblems(channel, terms)];
}

/** The heartbeat period (optional: no heartbeats without it) and the timeout, in seconds. */
function numberProblems(channel: BackportSubscription['channel'], terms: Partial<SubscriptionTerms>): Problem[] {
  const problems: Problem[] = [];
  const [heartbeat, ...moreHeartbeats] = extensionOf(channel.extension, HEARTBEAT);
  const period = heartbeat?.valueUnsignedInt;
  if (
    heartbeat &&
    (moreHeartbeats.length > 0 || !Number.isInteger(period) || period! < 1 || period! > MAX_HEARTBEAT_SECONDS)
  ) {
    problems.push(problem('Subscription.channel', `The heartbeat period is 1 to ${MAX_HEARTBEAT_SECONDS} seconds.`));
  }
  if (period !== undefined) terms.heartbeatPeriodSeconds = period;
  const timeout = extensionOf(channel.extension, TIMEOUT)[0]?.valueUnsignedInt ?? DEFAULT_TIMEOUT_SECONDS;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_SECONDS) {
    problems.push(problem('Subscription.channel', `The timeout is 1 to ${MAX_TIMEOUT_SECONDS} seconds.`));
  }
  terms.timeoutSeconds = timeout;
  return problems;
}

/**
 * The terms of a Subscription that passed base R4, or its problems (each an issue with the element's FHIRPath;
 * a filter naming another organization is `forbidden`). `requested` is the status a create carries.
 */
export function subscriptionTerms(
  subscription: BackportSubscription,
  clientId: string,
  now: Date,
  kind: 'create' | 'update',
): { terms: SubscriptionTerms; problems: [] } | { problems: Problem[] } {
  const terms: Partial<SubscriptionTerms> = { reason: subscription.reason };
  const problems: Problem[] = [];
  if (kind === 'create' && subscription.status !== 'requested') {
    problems.push(problem('Subscription.status', 'A new subscription is requested.'));
  }
  if (subscription.criteria !== PAS_TOPIC) {
    problems.push(problem('Subscription.criteria', `The criteria is the PAS topic, ${PAS_TOPIC}.`));
  }
  const end = subscription.end ? Date.parse(subscription.end) : Number.NaN;
  if (!(end > now.getTime())) problems.push(problem('Subscription.end', 'The subscription has an end, ahead.'));
  else terms.end = new Date(end).toISOString();
  problems.push(...filterProblems(subscription, clientId, terms), ...channelProblems(subscription.channel, terms));
  return problems.length > 0 ? { problems } : { terms: terms as SubscriptionTerms, problems: [] };
}

/** The Subscription as the payer shows it: the terms, its id and status. The headers stay unshown (secrets). */
export function subscriptionResource(id: string, status: Subscription['status'], terms: SubscriptionTerms) {
  const resource: BackportSubscription = {
    resourceType: 'Subscription',
    id,
    meta: { profile: [PAS_PROFILE] },
    status,
    end: terms.end,
    reason: terms.reason,
    criteria: PAS_TOPIC,
    _criteria: { extension: [{ url: FILTER, valueString: `org-identifier=${terms.orgIdentifiers.join(',')}` }] },
    channel: {
      extension: [
        ...(terms.heartbeatPeriodSeconds ? [{ url: HEARTBEAT, valueUnsignedInt: terms.heartbeatPeriodSeconds }] : []),
        { url: TIMEOUT, valueUnsignedInt: terms.timeoutSeconds },
      ],
      type: 'rest-hook',
      endpoint: terms.endpoint,
      payload: 'application/fhir+json',
      _payload: { extension: [{ url: CONTENT, valueCode: 'full-resource' }] },
    },
  };
  return resource;
}
