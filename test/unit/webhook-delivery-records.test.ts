import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ServiceEvent } from '#lib/entities/service-event';
import type { StoredWebhook } from '#lib/entities/webhook';
import {
  afterAttempt,
  DISABLE_AFTER_FAILING_MS,
  deliveryIdOf,
  healthAfter,
  JITTER,
  newDelivery,
  RETRY_DELAYS_SECONDS,
  redelivered,
  retryDelayMs,
  webhookPayloadOf,
} from '#lib/webhooks/delivery-records';
import { bodyErrors, webhookBodyErrors } from '#test/support/webhook-bodies';

/** The retry schedule and a subscription's health (lib/webhooks/delivery-records.ts), as docs/webhooks.md states them. */
const event: ServiceEvent<'webhook.test'> = {
  id: 'evt_0190f0f0-1111-7222-8333-444455556666',
  type: 'webhook.test',
  clientId: 'c1',
  organizationId: 'o1',
  occurredAt: '2026-05-01T00:00:00.000Z',
  data: { webhookId: 'w1' },
};
const webhook = { clientId: 'c1', webhookId: 'w1', organizationId: null };
const at = new Date('2026-05-01T00:00:00.000Z');
const failure = (when: Date) => ({
  at: when.toISOString(),
  durationMs: 5,
  responseStatus: 500,
  error: 'http_status' as const,
});

describe('the retry schedule', () => {
  it('is 5 s × 4^(n−1) capped at 8 h: nine retries over about a day', () => {
    expect(RETRY_DELAYS_SECONDS).toEqual([5, 20, 80, 320, 1280, 5120, 20480, 28800, 28800]);
    const total = RETRY_DELAYS_SECONDS.reduce((sum, seconds) => sum + seconds, 0);
    expect(total / 3600).toBeCloseTo(23.58, 1);
  });

  it('jitters each pause within ±20 %, and has no pause after the last', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: RETRY_DELAYS_SECONDS.length }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (n, r) => {
          const pause = retryDelayMs(n, () => r)!;
          const nominal = RETRY_DELAYS_SECONDS[n - 1]! * 1000;
          expect(pause).toBeGreaterThanOrEqual(Math.floor(nominal * (1 - JITTER)));
          expect(pause).toBeLessThanOrEqual(Math.ceil(nominal * (1 + JITTER)));
        },
      ),
    );
    expect(retryDelayMs(RETRY_DELAYS_SECONDS.length + 1)).toBeUndefined();
  });

  it('keeps the body and webhook-id of every attempt, and fails after the tenth', () => {
    let delivery = newDelivery(event, webhook, 'event', at);
    expect(delivery.deliveryId).toBe(deliveryIdOf(event.id));
    expect(JSON.parse(delivery.payload)).toEqual({
      id: event.id,
      type: event.type,
      occurredAt: event.occurredAt,
      data: event.data,
    });
    const { payload, eventId } = delivery;
    let now = at;
    for (let n = 1; n <= RETRY_DELAYS_SECONDS.length; n++) {
      delivery = afterAttempt(delivery, failure(now), now, () => 0.5);
      expect(delivery).toMatchObject({ status: 'pending', attempts: n, payload, eventId });
      expect(Date.parse(delivery.scheduledAt) - now.getTime()).toBe(RETRY_DELAYS_SECONDS[n - 1]! * 1000);
      now = new Date(delivery.scheduledAt);
    }
    delivery = afterAttempt(delivery, failure(now), now);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 10 });
    expect(delivery.recentAttempts).toHaveLength(10);
    // A redelivery starts the schedule again, keeping the count of attempts.
    const again = redelivered(delivery, now);
    expect(again).toMatchObject({ status: 'pending', attempts: 10, cycleAttempts: 0, scheduledAt: now.toISOString() });
    const retried = afterAttempt(again, failure(now), now, () => 0.5);
    expect(Date.parse(retried.scheduledAt) - now.getTime()).toBe(5000);
  });

  it('records a success as delivered', () => {
    const delivered = afterAttempt(
      newDelivery(event, webhook, 'test', at),
      { ...failure(at), responseStatus: 204, error: null },
      at,
    );
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 1, deliveredAt: at.toISOString() });
  });
});

describe("a subscription's health", () => {
  const stored = (fields: Partial<StoredWebhook>): StoredWebhook => ({
    clientId: 'c1',
    webhookId: 'w1',
    organizationId: null,
    url: 'https://hooks.example.com/',
    events: ['automation.run_finished'],
    description: null,
    status: 'active',
    failingSince: null,
    secret: { v: 2, keyring: 'local', message: 'x' },
    previousSecret: null,
    previousSecretExpiresAt: null,
    secretCreatedAt: at.toISOString(),
    version: 1,
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
    ...fields,
  });

  it('goes failing, then disabled after 3 days of it, and active again on a success', () => {
    const failing = healthAfter(stored({}), 'failed', at)!;
    expect(failing).toMatchObject({ status: 'failing', failingSince: at.toISOString(), version: 2 });
    const later = new Date(at.getTime() + DISABLE_AFTER_FAILING_MS - 1);
    expect(healthAfter(failing, 'failed', later)).toBeUndefined();
    const disabled = healthAfter(failing, 'failed', new Date(at.getTime() + DISABLE_AFTER_FAILING_MS))!;
    expect(disabled).toMatchObject({ status: 'disabled', failingSince: at.toISOString() });
    expect(healthAfter(disabled, 'delivered', later)).toMatchObject({ status: 'active', failingSince: null });
    expect(healthAfter(stored({}), 'delivered', at)).toBeUndefined();
  });
});

describe('what a subscription receives of a status change', () => {
  const statusChanged = (
    runId: string | null,
    runOrganizationId?: string,
  ): ServiceEvent<'authorization.status_changed'> => ({
    id: 'evt_0190f0f0-1111-7222-8333-444455556667',
    type: 'authorization.status_changed',
    clientId: 'c1',
    ...(runOrganizationId ? { runOrganizationId } : {}),
    occurredAt: '2026-05-01T00:00:00.000Z',
    data: {
      requestExternalId: 'REQ-1',
      previous: { status: 'pending', number: null, decisionDate: null },
      current: { status: 'approved', number: 'A1', decisionDate: '2026-05-01' },
      runId,
      items: [],
      reasonCodes: [],
    },
  });
  const runIdFor = (event: ServiceEvent, organizationId: string | null) =>
    (
      JSON.parse(newDelivery(event, { ...webhook, organizationId }, 'event', at).payload) as {
        data: { runId: unknown };
      }
    ).data.runId;
  const runId = '0190f0f0-1111-7222-8333-444455556668';

  it("shows the run's id to an unrestricted subscription and to one of the run's organization, null to another", () => {
    const event = statusChanged(runId, 'org-a');
    expect(runIdFor(event, null)).toBe(runId);
    expect(runIdFor(event, 'org-a')).toBe(runId);
    expect(runIdFor(event, 'org-b')).toBeNull();
  });

  it("never carries the routing fields, and an event that does not say its run's organization shows the run to unrestricted subscriptions only", () => {
    const event = statusChanged(runId);
    expect(runIdFor(event, null)).toBe(runId);
    expect(runIdFor(event, 'org-a')).toBeNull();
    const payload = webhookPayloadOf(statusChanged(runId, 'org-a'), { organizationId: 'org-a' });
    expect(Object.keys(payload).sort()).toEqual(['data', 'id', 'occurredAt', 'type']);
    expect(runIdFor(statusChanged(null), 'org-a')).toBeNull();
  });

  it('gives an event written before events said why a denial was made empty items and reason codes', () => {
    const { items: _, reasonCodes: __, ...older } = statusChanged(runId).data;
    const event = { ...statusChanged(runId), data: older } as ServiceEvent<'authorization.status_changed'>;
    const payload = JSON.parse(newDelivery(event, { ...webhook, organizationId: null }, 'event', at).payload);
    expect(payload.data).toMatchObject({ items: [], reasonCodes: [] });
    expect(webhookBodyErrors(event)).not.toEqual([]);
    expect(bodyErrors(event.type, payload)).toEqual([]);
  });
});
