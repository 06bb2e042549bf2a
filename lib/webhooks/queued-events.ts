import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { ServiceEvent } from '#lib/entities/service-event';
import { MalformedBusEvent, serviceEventOf } from '#lib/events/bus-event';
import { log } from '#lib/observability/logger';

/*
 * The queue side of delivery on AWS (docs/webhooks.md, "On AWS"): each SQS message is an EventBridge
 * event of the service-review bus, handed to the same `deliverEvent` the local relay calls. A receiver's
 * own failure is a recorded attempt, retried by the delivery's schedule (the sweep), so it is not a
 * message failure: only a message whose event could not be read or recorded is reported back, so that SQS
 * retries it alone and moves it to the dead-letter queue after maxReceiveCount.
 *
 * Written by hand (about twenty lines) rather than with Powertools' batch processor: the package is not a
 * dependency, and it would add its own processor, error classes and middleware to the bundle for the same
 * `batchItemFailures` list.
 */

export type DeliverEvent = (event: ServiceEvent) => Promise<unknown>;

/** Delivers every message of the batch at once; the ids of those that failed. */
export const deliverQueuedEvents =
  (deliver: DeliverEvent) =>
  async ({ Records }: Pick<SQSEvent, 'Records'>): Promise<SQSBatchResponse> => {
    const outcomes = await Promise.allSettled(Records.map(async (record) => deliver(serviceEventOf(record.body))));
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.status === 'fulfilled') continue;
      const { messageId } = Records[i]!;
      batchItemFailures.push({ itemIdentifier: messageId });
      const error = outcome.reason as Error | undefined;
      // Ids only: the message's body is an event, and an SDK error's message may quote a key.
      log.warn(
        error instanceof MalformedBusEvent ? 'Queued message is not a service event' : 'Queued event not delivered',
        { messageId, errorName: error?.name },
      );
    }
    return { batchItemFailures };
  };
