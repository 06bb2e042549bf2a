import { payerSubscriptionsEverySeconds } from '#lib/config/settings';
import { scheduledPayerFunctions } from '#lib/routes/event-functions';
import { type HandlerLoader, lambdaContext } from './gateway/invoke.ts';
import { type PeriodicRun, periodicRun } from './periodic-run.ts';

/*
 * The subscription keeper's timer of the local stack (docs/payer-api.md, "Subscriptions"): every
 * PAYER_SUBSCRIPTIONS_EVERY_SECONDS (5 minutes unless set) it runs KeepPayerSubscriptions, the function
 * EventBridge starts on AWS. A run still under way when the next tick comes is not doubled.
 */
export type PayerSubscriptionTimer = PeriodicRun;

export const startPayerSubscriptionTimer = (
  loadHandler: HandlerLoader,
  intervalMs = payerSubscriptionsEverySeconds() * 1000,
): PayerSubscriptionTimer => {
  const run = async () => {
    try {
      for (const row of scheduledPayerFunctions) {
        await (await loadHandler(row.handler))({}, lambdaContext(row.name));
      }
    } catch (error) {
      // The next tick tries again: the due index holds what is still due.
      process.stderr.write(`local payer subscriptions: ${(error as Error).name}\n`);
    }
  };
  return periodicRun(run, intervalMs);
};
