import type { SigningSecretOpener } from './signing-secrets.ts';
import type { Transport } from './transport.ts';
import type { WebhookStore } from './webhook-store.ts';

export interface DeliveryDependencies {
  store: WebhookStore;
  openSecret: SigningSecretOpener;
  transport: Transport;
  now?: () => Date;
  random?: () => number;
  /** Attempts `deliverDue` runs at once. */
  concurrency?: number;
}

/** The dependencies with their defaults filled in: what every delivery step is given first. */
export type DeliveryContext = Required<DeliveryDependencies>;

export function contextOf(deps: DeliveryDependencies): DeliveryContext {
  return {
    ...deps,
    now: deps.now ?? (() => new Date()),
    random: deps.random ?? Math.random,
    concurrency: deps.concurrency ?? 4,
  };
}
