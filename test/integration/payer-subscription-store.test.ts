import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { StoredPayerSubscription } from '#lib/entities/payer-subscription';
import { dynamoPayerSubscriptionStore as store } from '#lib/payer-subscriptions/dynamo-payer-subscription-store';
import { shardOf } from '#lib/table-shards';

/*
 * The subscriptions' store on the local table (dynalite through the SDK): one current subscription per
 * connection under concurrent creates, replacement, replays refused, versioned updates, the due index.
 */
const AT = '2026-11-28T08:00:00.000Z';

const subscriptionOf = (clientId: string, payerConnectionId: string, checkDueAt = AT): StoredPayerSubscription => {
  const subscriptionId = randomUUID();
  return {
    subscriptionId,
    clientId,
    organizationId: 'org-1',
    payerConnectionId,
    payerId: 'PAYER-1',
    payerSubscriptionId: null,
    secretHash: 'a'.repeat(64),
    status: 'requested',
    endAt: '2026-12-05T08:00:00.000Z',
    heartbeatPeriodSeconds: 300,
    lastEventNumber: 0,
    lastNotifiedAt: null,
    shard: shardOf(subscriptionId),
    checkDueAt,
    version: 1,
    createdAt: AT,
    updatedAt: AT,
  };
};

describe('the payer subscriptions store', () => {
  it('keeps one current subscription per connection: of two concurrent creates, one lands', async () => {
    const clientId = `c-${randomUUID()}`;
    const [first, second] = [subscriptionOf(clientId, 'conn-1'), subscriptionOf(clientId, 'conn-1')];
    const created = await Promise.all([store.create(first), store.create(second)]);
    expect(created.filter(Boolean)).toHaveLength(1);
    const winner = created[0] ? first : second;
    expect((await store.currentOf(clientId, 'conn-1'))?.subscriptionId).toBe(winner.subscriptionId);
    expect(await store.get((created[0] ? second : first).subscriptionId)).toBeUndefined();
  });

  it('replaces the current one only as read, and ends the replaced one off', async () => {
    const clientId = `c-${randomUUID()}`;
    const old = subscriptionOf(clientId, 'conn-1');
    expect(await store.create(old)).toBe(true);
    const next = subscriptionOf(clientId, 'conn-1');
    expect(await store.create(next, old)).toBe(true);
    expect((await store.currentOf(clientId, 'conn-1'))?.subscriptionId).toBe(next.subscriptionId);
    expect((await store.get(old.subscriptionId))?.status).toBe('off');
    // A second replacement of the same old one lost its race: nothing written.
    const late = subscriptionOf(clientId, 'conn-1');
    expect(await store.create(late, old)).toBe(false);
    expect(await store.get(late.subscriptionId)).toBeUndefined();
  });

  it('records notifications and refuses a replayed event number', async () => {
    const subscription = subscriptionOf(`c-${randomUUID()}`, 'conn-1');
    await store.create(subscription);
    expect(await store.recordNotification(subscription.subscriptionId, { at: AT, status: 'active' })).toBe('recorded');
    const event = { at: AT, status: 'active' as const, eventNumber: 1 };
    expect(await store.recordNotification(subscription.subscriptionId, event)).toBe('recorded');
    expect(await store.recordNotification(subscription.subscriptionId, event)).toBe('replayed');
    expect(await store.recordNotification(randomUUID(), event)).toBe('not_found');
    const stored = await store.get(subscription.subscriptionId);
    expect(stored).toMatchObject({ status: 'active', lastEventNumber: 1, lastNotifiedAt: AT, version: 3 });
  });

  it('updates on the version read, and moves the due index with checkDueAt', async () => {
    const subscription = subscriptionOf(`c-${randomUUID()}`, 'conn-1', '2001-01-01T00:00:00.000Z');
    await store.create(subscription);
    const due = await store.due(subscription.shard, '2001-01-01T00:00:00.000Z', 50);
    expect(due.map((s) => s.subscriptionId)).toContain(subscription.subscriptionId);
    const later = '2001-01-02T00:00:00.000Z';
    const updated = await store.update(subscription, { checkDueAt: later, status: 'active' }, AT);
    expect(updated).toMatchObject({ checkDueAt: later, status: 'active', version: 2 });
    expect(await store.update(subscription, { status: 'error' }, AT)).toBeUndefined();
    const dueNow = await store.due(subscription.shard, '2001-01-01T00:00:00.000Z', 50);
    expect(dueNow.map((s) => s.subscriptionId)).not.toContain(subscription.subscriptionId);
  });
});
