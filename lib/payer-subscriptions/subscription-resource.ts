import type { Subscription } from '@medplum/fhirtypes';
import { PAYER_SUBSCRIPTION_STATUSES, type PayerSubscriptionStatus } from '#lib/entities/payer-subscription';

/*
 * The PAS Subscription we POST (R4 Subscriptions Backport, the PAS Subscription profile: the PAS topic,
 * filtered by our sending system's identifier at the payer, rest-hook, full-resource content), and what we
 * read of the payer's answers: its id for the subscription, and the status it reports (the resource's, or
 * a SubscriptionStatus Parameters' from `$status`). Values are checked; nothing else of a body is kept.
 */

const PAS_SUBSCRIPTION_PROFILE = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/profile-subscription';
const PAS_SUBSCRIPTION_TOPIC = 'http://hl7.org/fhir/us/davinci-pas/SubscriptionTopic/PASSubscriptionTopic';
const BACKPORT = 'http://hl7.org/fhir/uv/subscriptions-backport/StructureDefinition/';

export interface SubscriptionRequest {
  /** Where the payer POSTs notifications: our public route with our subscription id. */
  notificationUrl: string;
  /** Sent once, in the channel header the payer sends back; we keep only its hash. */
  secret: string;
  /** Our sending system's identifier as the payer knows it: the connection's client_id there. */
  orgIdentifier: string;
  endAt: string;
  heartbeatPeriodSeconds: number;
}

// The primitive extensions (`_criteria`, `_payload`) are JSON FHIR that the types do not spell.
export const subscriptionResourceOf = (request: SubscriptionRequest): Subscription =>
  ({
    resourceType: 'Subscription',
    meta: { profile: [PAS_SUBSCRIPTION_PROFILE] },
    status: 'requested',
    end: request.endAt,
    reason: 'Prior authorization responses for our sending system',
    criteria: PAS_SUBSCRIPTION_TOPIC,
    _criteria: {
      extension: [
        { url: `${BACKPORT}backport-filter-criteria`, valueString: `org-identifier=${request.orgIdentifier}` },
      ],
    },
    channel: {
      extension: [{ url: `${BACKPORT}backport-heartbeat-period`, valueUnsignedInt: request.heartbeatPeriodSeconds }],
      type: 'rest-hook',
      endpoint: request.notificationUrl,
      payload: 'application/fhir+json',
      _payload: { extension: [{ url: `${BACKPORT}backport-payload-content`, valueCode: 'full-resource' }] },
      header: [`Authorization: Bearer ${request.secret}`],
    },
  }) as Subscription;

/** The `<public API base>/api/external/v1.1/Payers/notifications/<subscriptionId>` a payer notifies. */
export const notificationUrlOf = (publicApiBaseUrl: string, subscriptionId: string) =>
  `${publicApiBaseUrl.replace(/\/+$/, '')}/api/external/v1.1/Payers/notifications/${encodeURIComponent(subscriptionId)}`;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const statusOf = (value: unknown): PayerSubscriptionStatus | undefined =>
  PAYER_SUBSCRIPTION_STATUSES.find((status) => status === value);

/** FHIR ids: 1 to 64 of letters, digits, `-` and `.` (what we may put in a path). */
const FHIR_ID = /^[A-Za-z0-9.-]{1,64}$/;

/** The payer's Subscription as answered to a create, read or renewal; undefined when the body is not one. */
export const payerSubscriptionOf = (
  body: unknown,
): { id: string; status: PayerSubscriptionStatus; resource: Record<string, unknown> } | undefined => {
  if (!isRecord(body) || body.resourceType !== 'Subscription') return undefined;
  const status = statusOf(body.status);
  if (typeof body.id !== 'string' || !FHIR_ID.test(body.id) || !status) return undefined;
  return { id: body.id, status, resource: body };
};

/** The status a `$status` answer reports: its SubscriptionStatus Parameters, alone or in a searchset Bundle. */
export const reportedStatusOf = (body: unknown): PayerSubscriptionStatus | undefined => {
  const entry = isRecord(body) && Array.isArray(body.entry) ? body.entry[0] : undefined;
  const parameters = isRecord(body) && body.resourceType === 'Bundle' && isRecord(entry) ? entry.resource : body;
  if (!isRecord(parameters) || parameters.resourceType !== 'Parameters' || !Array.isArray(parameters.parameter)) {
    return undefined;
  }
  const status = parameters.parameter.find((parameter) => isRecord(parameter) && parameter.name === 'status');
  return isRecord(status) ? statusOf(status.valueCode) : undefined;
};

/** Whether the payer's copy still holds a channel header (ours): a renewal sends it back whole. */
export const keepsChannelHeader = (resource: Record<string, unknown>) =>
  isRecord(resource.channel) && Array.isArray(resource.channel.header) && resource.channel.header.length > 0;
