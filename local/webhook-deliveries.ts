import { deliverAllDue } from '#lib/webhooks/sweep';

/**
 * The retry timer of the local stack (docs/webhooks.md, "Retries"): every WEBHOOK_SWEEP_SECONDS it
 * asks the delivery code for the deliveries due now (one Query of the retry queue, gsi1) and attempts
 * them, until none is left due: `deliverAllDue`, which the scheduled function runs on AWS; first
 * attempts of events do not wait for it (the relay's deliverEvent sends them at once), tests and
 * redeliveries do.
 */
export interface WebhookTimer {
  /** Stops the timer and waits for the sweep under way. */
  close(): Promise<void>;
}

const DEFAULT_SWEEP_SECONDS = 2;

/** WEBHOOK_SWEEP_SECONDS: a positive number of seconds (fractions allowed), else the default. */
const sweepIntervalMs = (raw = process.env.WEBHOOK_SWEEP_SECONDS) => {
  if (raw === undefined || raw.trim() === '') return DEFAULT_SWEEP_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new Error(`WEBHOOK_SWEEP_SECONDS must be a number of seconds from 0 to 3600, not ${raw}.`);
  }
  return Math.round(seconds * 1000);
};

export const startWebhookTimer = async (intervalMs = sweepIntervalMs()): Promise<WebhookTimer> => {
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
