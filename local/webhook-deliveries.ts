import { deliverAllDue } from '#lib/webhooks/sweep';

/**
 * The retry timer of the local stack (docs/webhooks.md, "Retries"): every WEBHOOK_SWEEP_SECONDS it
 * asks the delivery code for the deliveries due now (the retry queue, gsi1: a Query per shard) and attempts
 * them, until none is left due: `deliverAllDue`, which the scheduled function runs on AWS; first
 * attempts of events do not wait for it (the relay's deliverEvent sends them at once), tests and
 * redeliveries do.
 */
export interface WebhookTimer {
  /** Stops the timer and waits for the sweep under way. */
  close(): Promise<void>;
}

/** `intervalMs`: WEBHOOK_SWEEP_SECONDS (local/config.ts). */
export const startWebhookTimer = async (intervalMs: number): Promise<WebhookTimer> => {
  // Loaded once the stack's environment is set: its SDK client and keyring read it.
  const { webhookDeliveries } = await import('#lib/webhooks/delivery-service');
  let stopped = false;
  let sweep: Promise<void> | undefined;
  const run = async () => {
    try {
      if (!stopped) await deliverAllDue(webhookDeliveries(), () => !stopped);
    } catch (error) {
      // The next tick tries again; a held delivery is due again once its hold ends.
      process.stderr.write(`local webhook deliveries: ${(error as Error).name}\n`);
    }
  };
  const timer = setInterval(() => {
    sweep ??= run().finally(() => {
      sweep = undefined;
    });
  }, intervalMs);
  timer.unref();
  return {
    close: async () => {
      stopped = true;
      clearInterval(timer);
      await sweep;
    },
  };
};
