import { retryOnConflict } from '#lib/concurrency';
import type { StoredPayerEndpoint } from '#lib/entities/payer-endpoint';
import { log } from '#lib/observability/logger';
import { checkedPayerEndpoint, type PayerEndpointInput } from './payer-endpoint-input.ts';
import type { PayerEndpointStore } from './payer-endpoint-store.ts';
import type { PayerUrlPolicy } from './payer-endpoint-url.ts';

/**
 * The operators' directory of payer APIs (docs/payer-connections.md, "Payer endpoints"): set (create
 * or replace whole), list, delete; the admin CLI's commands. The channel choice reads one endpoint with
 * the store's `get`. Operator data: no tenant, no scope.
 */
export interface PayerEndpointDependencies {
  store: PayerEndpointStore;
  /** The deployment's URL policy (lib/config/settings.ts `webhookUrlPolicy`): `local` on the local stack only. */
  urlPolicy: () => PayerUrlPolicy;
  now?: () => Date;
}

/** Two operators setting one payer at once: the later read wins after a retry or two. */
const MAX_ATTEMPTS = 3;

/** Sets the payer's endpoint, every field: a field not given is back at its default (no name, the default scope). */
async function set(deps: Required<PayerEndpointDependencies>, input: PayerEndpointInput): Promise<StoredPayerEndpoint> {
  const checked = checkedPayerEndpoint(input, deps.urlPolicy());
  return retryOnConflict(
    async () => {
      const current = await deps.store.get(checked.payerId);
      const at = deps.now().toISOString();
      const endpoint: StoredPayerEndpoint = {
        ...checked,
        version: (current?.version ?? 0) + 1,
        createdAt: current?.createdAt ?? at,
        updatedAt: at,
      };
      if (current) await deps.store.update(endpoint, current.version);
      else await deps.store.create(endpoint);
      log.info(current ? 'Payer endpoint replaced' : 'Payer endpoint created', {
        payerId: endpoint.payerId,
        version: endpoint.version,
      });
      return endpoint;
    },
    {
      attempts: MAX_ATTEMPTS,
      onExhausted: () => new Error(`The endpoint of payer ${checked.payerId} is being set concurrently; retry.`),
    },
  );
}

async function remove(deps: Required<PayerEndpointDependencies>, payerId: string): Promise<void> {
  if (!(await deps.store.delete(payerId))) throw new Error(`No payer endpoint for ${payerId}.`);
  log.info('Payer endpoint deleted', { payerId });
}

export const payerEndpointDirectory = (deps: PayerEndpointDependencies) => {
  const ready = { now: () => new Date(), ...deps };
  return {
    set: (input: PayerEndpointInput) => set(ready, input),
    get: (payerId: string) => ready.store.get(payerId),
    list: () => ready.store.list(),
    remove: (payerId: string) => remove(ready, payerId),
  };
};
