import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { handler as deliverDueWebhooks } from '#functions/webhooks/deliver-due-webhooks';
import { handler as deliverWebhookEvents } from '#functions/webhooks/deliver-webhook-events';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { outboxEntity } from '#lib/entities/outbox';
import { payloadOf, type ServiceEvent } from '#lib/entities/service-event';
import { type DeliveryRef, webhookDeliveryEntity } from '#lib/entities/webhook';
import { EVENT_SOURCE, pipeTarget } from '#lib/events/bus-event';
import { newEvent } from '#lib/events/events';
import { outboxItemOf } from '#lib/events/outbox';
import { shardOf } from '#lib/table-shards';
import { newDelivery } from '#lib/webhooks/delivery-records';
import { dynamoWebhookStore } from '#lib/webhooks/dynamo-webhook-store';
import { webhooksWithSecrets } from '#lib/webhooks/service-with-secrets';
import { dropTable, ensureTable } from '#local/table';
import { type Answer, matchingSignatures, type Receiver, startReceiver } from './webhook-receiver-support.ts';

/*
 * The AWS side of delivery run here (docs/webhooks.md, "On AWS"): the delivery functions' handlers, given
 * what SQS hands them (an EventBridge event of the service-review bus, its detail as the pipe writes it),
 * send to real receivers on loopback through the same deliverEvent and sweep the local stack runs. On a
 * table of their own in the test stack's DynamoDB, so the stack's relay and retry timer never race them.
 */
const endpoint = inject('stackEnv').AWS_ENDPOINT_URL_DYNAMODB!;
const table = `queue-${Date.now().toString(36)}`;
const stackTable = process.env.TABLE_NAME;
const receivers: Receiver[] = [];
beforeAll(async () => {
  await ensureTable(endpoint, table);
  process.env.TABLE_NAME = table;
});
afterAll(async () => {
  process.env.TABLE_NAME = stackTable;
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await dropTable(endpoint, table);
});

const receiver = async (answer?: Answer) => {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
};

const subscribe = async (clientId: string, url: string, events = ['automation.batch_finished']) =>
  webhooksWithSecrets.create({ clientId }, { url, events: events as never });

/** An SQS record holding `event` as the bus's rule queues it: the EventBridge event the pipe put on the bus. */
const queued = (event: ServiceEvent): SQSRecord => {
  const image = marshall(outboxEntity.toItem(outboxItemOf(event)), { removeUndefinedValues: true });
  return sqsRecord(
    JSON.stringify({
      version: '0',
      id: crypto.randomUUID(),
      'detail-type': event.type,
      source: EVENT_SOURCE,
      account: '123456789012',
      time: event.occurredAt,
      region: 'us-east-1',
      resources: [],
      // pipeTarget.inputTemplate: the new image's `event` map, as it is.
      detail: (image.event as { M: unknown }).M,
    }),
  );
};
const sqsRecord = (body: string): SQSRecord => ({
  messageId: crypto.randomUUID(),
  receiptHandle: 'handle',
  body,
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: String(Date.now()),
    SenderId: 'AIDAEVENTS',
    ApproximateFirstReceiveTimestamp: String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:deliveries',
  awsRegion: 'us-east-1',
});

const batchFinished = (clientId: string) =>
  newEvent('automation.batch_finished', clientId, new Date().toISOString(), {
    batchId: crypto.randomUUID(),
    total: 2,
    counts: { succeeded: 1, failed: 1 },
  });

const lambdaContext = (remainingMs: number) =>
  ({ functionName: 'DeliverDueWebhooks', getRemainingTimeInMillis: () => remainingMs }) as unknown as Context;

describe('DeliverWebhookEvents (the queue of the bus)', () => {
  it('delivers a queued event to a real receiver, signed, and reports a message that is no event as failed', async () => {
    expect(pipeTarget.inputTemplate).toBe('<$.dynamodb.NewImage.event.M>');
    const inbox = await receiver();
    const clientId = `client-${crypto.randomUUID()}`;
    const { webhook, secret } = await subscribe(clientId, inbox.url);
    const event = batchFinished(clientId);
    const good = queued(event);
    const bad = sqsRecord('{"source":"somewhere.else"}');

    const answer = await deliverWebhookEvents({ Records: [good, bad] } as SQSEvent);
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });

    const [delivery] = await inbox.waitFor(1);
    expect(delivery!.headers['webhook-id']).toBe(event.id);
    expect(matchingSignatures(secret, delivery!)).toHaveLength(1);
    expect(JSON.parse(delivery!.body)).toEqual(payloadOf(event));
    const [recorded] = (await dynamoWebhookStore.listDeliveries(clientId, webhook.webhookId, { limit: 5 })).items;
    expect(recorded).toMatchObject({ eventId: event.id, status: 'delivered', attempts: 1 });

    // Handed over again (SQS is at-least-once): recorded once, so not sent twice.
    expect(await deliverWebhookEvents({ Records: [good] } as SQSEvent)).toEqual({ batchItemFailures: [] });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inbox.received).toHaveLength(1);
  });

  it("does not fail the message for a receiver's 500: the attempt is recorded and the sweep retries it", async () => {
    const inbox = await receiver(() => ({ status: 500 }));
    const clientId = `client-${crypto.randomUUID()}`;
    const { webhook } = await subscribe(clientId, inbox.url);
    const event = batchFinished(clientId);
    expect(await deliverWebhookEvents({ Records: [queued(event)] } as SQSEvent)).toEqual({ batchItemFailures: [] });
    await inbox.waitFor(1);
    const [recorded] = (await dynamoWebhookStore.listDeliveries(clientId, webhook.webhookId, { limit: 5 })).items;
    expect(recorded).toMatchObject({ eventId: event.id, status: 'pending', attempts: 1 });
    expect(recorded!.recentAttempts).toEqual([expect.objectContaining({ responseStatus: 500, error: 'http_status' })]);
  });

  it('reports an event it could not record as failed, and delivers it when SQS hands it over again', async () => {
    const inbox = await receiver();
    const clientId = `client-${crypto.randomUUID()}`;
    await subscribe(clientId, inbox.url);
    const event = batchFinished(clientId);
    const message = queued(event);
    // The table out of reach (ResourceNotFoundException on the subscriptions' Query): nothing recorded, nothing sent.
    process.env.TABLE_NAME = `missing-${table}`;
    try {
      expect(await deliverWebhookEvents({ Records: [message] } as SQSEvent)).toEqual({
        batchItemFailures: [{ itemIdentifier: message.messageId }],
      });
    } finally {
      process.env.TABLE_NAME = table;
    }
    expect(inbox.received).toEqual([]);
    expect(await deliverWebhookEvents({ Records: [message] } as SQSEvent)).toEqual({ batchItemFailures: [] });
    expect((await inbox.waitFor(1)).map((received) => received.headers['webhook-id'])).toEqual([event.id]);
  });
});

describe('DeliverDueWebhooks (the scheduled sweep)', () => {
  it('sends what is due (a test call), as the local timer does, and nothing twice', async () => {
    const inbox = await receiver();
    const clientId = `client-${crypto.randomUUID()}`;
    const { webhook, secret } = await subscribe(clientId, inbox.url);
    const test = await webhooksWithSecrets.sendTest({ clientId }, webhook.webhookId);
    expect(await deliverDueWebhooks({}, lambdaContext(300_000))).toEqual({ sent: 1 });
    const [delivery] = await inbox.waitFor(1);
    expect(delivery!.headers['webhook-id']).toBe(test.eventId);
    expect(matchingSignatures(secret, delivery!)).toHaveLength(1);
    expect(await deliverDueWebhooks({}, lambdaContext(300_000))).toEqual({ sent: 0 });
    expect(inbox.received).toHaveLength(1);
  });

  it('sends the due deliveries of every shard, soonest first, and those recorded before the shards', async () => {
    const inbox = await receiver();
    const clientId = `client-${crypto.randomUUID()}`;
    const { webhook } = await subscribe(clientId, inbox.url);
    const hourAgo = Date.now() - 3_600_000;
    // 40 deliveries due a second apart over the last hour; the oldest as the store wrote it before the shards.
    const deliveries = Array.from({ length: 40 }, (_, i) =>
      newDelivery(batchFinished(clientId), webhook, 'event', new Date(hourAgo + i * 1000)),
    );
    const [legacy, ...sharded] = deliveries;
    const { shard: _, ...legacyItem } = {
      ...webhookDeliveryEntity.toItem(legacy!),
      gsi1pk: 'WEBHOOKDELIVERIES#pending',
    };
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: legacyItem }));
    for (const delivery of sharded) expect(await dynamoWebhookStore.createDelivery(delivery)).toBe(true);
    const keyOf = async ({ clientId, webhookId, deliveryId }: DeliveryRef) =>
      (
        await dynamo.send(
          new GetCommand({
            TableName: tableName(),
            Key: webhookDeliveryEntity.key({ clientId, webhookId, deliveryId }),
            ConsistentRead: true,
          }),
        )
      ).Item?.gsi1pk;
    const shards = await Promise.all(sharded.map(keyOf));
    expect(shards).toEqual(
      sharded.map((d) => `WEBHOOKDELIVERIES#pending#${shardOf(clientId, webhook.webhookId, d.deliveryId)}`),
    );
    // 39 deliveries over 8 shards reach fewer than 5 of them about 3 times in a billion.
    expect(new Set(shards).size).toBeGreaterThanOrEqual(5);

    // Soonest first across the shards (other tests' deliveries aside), the old partition's among them.
    const due = await dynamoWebhookStore.dueDeliveries(new Date().toISOString(), 100);
    expect(due.filter((ref) => ref.clientId === clientId).map((ref) => ref.deliveryId)).toEqual(
      deliveries.map((d) => d.deliveryId),
    );

    await deliverDueWebhooks({}, lambdaContext(300_000));
    const received = await inbox.waitFor(40);
    expect(new Set(received.map((r) => r.headers['webhook-id']))).toEqual(new Set(deliveries.map((d) => d.eventId)));
    // Written again by its attempt, the one from before the shards is in its shard now.
    expect(await keyOf(legacy!)).toBe(
      `WEBHOOKDELIVERIES#delivered#${shardOf(clientId, webhook.webhookId, legacy!.deliveryId)}`,
    );
  });
});
