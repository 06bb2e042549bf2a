import type { PayerCall, PayerCallResult, PayerEndpointView } from '#lib/payer-api/payer-task-context';
import type { PayerSubscriptionStore } from './payer-subscription-store.ts';
import { HEARTBEAT_PERIOD_SECONDS } from './subscription-timing.ts';

/*
 * What the subscription's creation and its keeper share: the store, the payer call (the payer tasks'
 * gateway: a token from the token function, a 401 retried once), the connection and the payer's endpoint
 * as the directory holds them now, and our public base URL.
 */

/** The connection, as a subscription needs it: its payer, its state and its client_id there (the filter). */
interface SubscribedConnection {
  payerId: string;
  status: 'active' | 'attention' | 'disabled';
  payerClientId: string;
}

export interface SubscriptionDependencies {
  store: PayerSubscriptionStore;
  call: (call: PayerCall) => Promise<PayerCallResult>;
  connectionOf: (clientId: string, externalId: string) => Promise<SubscribedConnection | undefined>;
  endpointOf: (payerId: string) => Promise<PayerEndpointView | undefined>;
  /** Unset: no subscription is made (lib/config/resources.ts `publicApiBaseUrl`). */
  publicApiBaseUrl: () => string | undefined;
  heartbeatPeriodSeconds?: number;
  now?: () => Date;
}

export type SubscriptionContext = Required<SubscriptionDependencies>;

export const subscriptionContextOf = (deps: SubscriptionDependencies): SubscriptionContext => ({
  heartbeatPeriodSeconds: HEARTBEAT_PERIOD_SECONDS,
  now: () => new Date(),
  ...deps,
});

/** Where a connection's subscription can be made or kept: its connection, its payer's endpoint, our URL. */
export interface SubscriptionSite {
  connection: SubscribedConnection;
  endpoint: PayerEndpointView;
  publicApiBaseUrl: string;
}

/** The site of a connection whose payer takes subscriptions; why not, else. */
export async function siteOf(
  ctx: SubscriptionContext,
  clientId: string,
  payerConnectionId: string,
): Promise<SubscriptionSite | 'no_connection' | 'not_subscribed'> {
  const connection = await ctx.connectionOf(clientId, payerConnectionId);
  if (!connection) return 'no_connection';
  const endpoint = await ctx.endpointOf(connection.payerId);
  const publicApiBaseUrl = ctx.publicApiBaseUrl();
  if (endpoint?.subscriptions !== 'rest-hook' || !publicApiBaseUrl) return 'not_subscribed';
  return { connection, endpoint, publicApiBaseUrl };
}

/** A payer call of this connection's. */
export const callOf = (
  clientId: string,
  payerConnectionId: string,
  site: SubscriptionSite,
  request: Pick<PayerCall, 'operation' | 'method' | 'bundle'>,
): PayerCall => ({ clientId, payerConnectionId, endpoint: site.endpoint, ...request });

/** A 2xx answer's body; undefined for every other result. */
export const answeredBody = (result: PayerCallResult) =>
  result.kind === 'answer' && result.status >= 200 && result.status < 300 ? result.body : undefined;

/** The payer no longer knows the subscription: a new one is made. */
export const isGone = (result: PayerCallResult) =>
  result.kind === 'answer' && (result.status === 404 || result.status === 410);
