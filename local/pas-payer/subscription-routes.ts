import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bundle } from '@medplum/fhirtypes';
import type { RegisteredClient } from './clients.ts';
import { clientOfBearer } from './fhir-requests.ts';
import { r4Errors } from './fhir-validation.ts';
import { BASE_HEADERS, mediaTypeOf, outcome, outcomeOf, parseJson, Refusal, readBody, sendFhir } from './http.ts';
import type { PayerSubscription, SubscriptionHub } from './subscription-hub.ts';
import { type BackportSubscription, subscriptionResource, subscriptionTerms } from './subscription-resource.ts';
import type { TokenStore } from './tokens.ts';

/*
 * The Subscription endpoints (PAS spec-55: create, update, delete; the backport's `$status`), for a client with
 * a live token. A client sees and changes only the subscriptions it created: another's id is not found.
 */
export interface SubscriptionEndpoints {
  hub: SubscriptionHub;
  tokens: TokenStore;
  clients: { get(clientId: string): RegisteredClient | undefined };
  fhirBaseUrl: string;
  now: () => Date;
}

const MAX_BYTES = 64 * 1024;
const PATH = /^\/fhir\/Subscription(?:\/([A-Za-z0-9.-]{1,64})(\/\$status)?)?$/;

export const isSubscriptionPath = (path: string) =>
  path === '/fhir/Subscription' || path.startsWith('/fhir/Subscription/');

/** The Subscription sent, checked against R4 and the PAS Subscription profile; its terms. */
async function termsOf(endpoints: SubscriptionEndpoints, req: IncomingMessage, clientId: string, id?: string) {
  const type = mediaTypeOf(req);
  if (type !== 'application/fhir+json' && type !== 'application/json') {
    throw new Refusal(415, outcomeOf('not-supported', 'Send the Subscription as application/fhir+json.'));
  }
  const tooLarge = () => new Refusal(413, outcomeOf('too-costly', `The body is larger than ${MAX_BYTES} bytes.`));
  const body = parseJson(
    await readBody(req, MAX_BYTES, tooLarge),
    (text) => new Refusal(400, outcomeOf('invalid', text)),
  );
  if ((body as BackportSubscription | null)?.resourceType !== 'Subscription') {
    throw new Refusal(400, outcomeOf('invalid', 'The body is a Subscription.', ['Subscription']));
  }
  const subscription = body as BackportSubscription;
  if (id !== undefined && subscription.id !== id) {
    throw new Refusal(400, outcomeOf('invalid', 'The Subscription’s id is the one of the URL.', ['Subscription.id']));
  }
  const structure = await r4Errors(subscription, MAX_BYTES);
  if (structure.length > 0) throw new Refusal(400, outcome(structure));
  const checked = subscriptionTerms(subscription, clientId, endpoints.now(), id === undefined ? 'create' : 'update');
  if (checked.problems.length > 0) {
    const forbidden = checked.problems.some((problem) => problem.code === 'forbidden');
    throw new Refusal(forbidden ? 403 : 400, outcome(checked.problems));
  }
  return 'terms' in checked ? checked.terms : (undefined as never);
}

const shown = (subscription: PayerSubscription) =>
  subscriptionResource(subscription.id, subscription.status, subscription.terms);

/** `$status`: the backport's answer, a searchset Bundle of one SubscriptionStatus. */
const statusBundle = (endpoints: SubscriptionEndpoints, subscription: PayerSubscription): Bundle => {
  const status = endpoints.hub.statusOf(subscription);
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    total: 1,
    timestamp: endpoints.now().toISOString(),
    entry: [{ fullUrl: `urn:uuid:${status.id}`, resource: status, search: { mode: 'match' } }],
  };
};

/** A request on /fhir/Subscription[/{id}[/$status]]: 404 for other paths, 405 for other methods. */
export async function routeSubscriptions(
  endpoints: SubscriptionEndpoints,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const match = PATH.exec(path);
  if (!match) return sendFhir(res, 404, outcomeOf('not-found', 'There is no such path.'));
  const [, id, operation] = match;
  const allow = id === undefined ? 'POST' : operation ? 'GET, POST' : 'GET, PUT, DELETE';
  if (!allow.split(', ').includes(req.method ?? '')) {
    return sendFhir(res, 405, outcomeOf('not-supported', 'This path does not take that method.'), { allow });
  }
  const client = clientOfBearer(req, endpoints.tokens, endpoints.clients.get);
  if (id === undefined) {
    const subscription = endpoints.hub.create(client.clientId, await termsOf(endpoints, req, client.clientId));
    const location = `${endpoints.fhirBaseUrl}/Subscription/${subscription.id}`;
    return sendFhir(res, 201, shown(subscription), { location });
  }
  const subscription = endpoints.hub.find(client.clientId, id);
  if (!subscription) throw new Refusal(404, outcomeOf('not-found', 'No subscription of yours has this id.'));
  if (operation) return sendFhir(res, 200, statusBundle(endpoints, subscription));
  if (req.method === 'GET') return sendFhir(res, 200, shown(subscription));
  if (req.method === 'PUT') {
    endpoints.hub.update(subscription, await termsOf(endpoints, req, client.clientId, subscription.id));
    return sendFhir(res, 200, shown(subscription));
  }
  endpoints.hub.remove(subscription);
  res.writeHead(204, BASE_HEADERS);
  res.end();
}
