import { describe, expect, it } from 'vitest';
import type { AuthorizationChange } from '#lib/entities/authorization-history';
import {
  type Authorization,
  type AuthorizationItem,
  type AuthorizationReason,
  DECISION_LIMITS,
  type StoredRequest,
} from '#lib/entities/request';
import { type EventData, payloadOf, type ServiceEvent } from '#lib/entities/service-event';
import { setAuthorization } from '#lib/requests/authorization-changes';
import { historyEntryOf } from '#lib/requests/authorization-history';
import { bodyErrors, webhookBodyErrors } from '#test/support/webhook-bodies';

/*
 * Why a denial or partial approval was made, as a change writes it (lib/requests/decision-reasons.ts,
 * through setAuthorization): the history entry keeps the payer's codes and text per item and for the
 * whole; the `authorization.status_changed` event carries the codes only, within its closed schema.
 */
const X12_886 = 'https://codesystem.x12.org/external/886';
const AT = '2026-03-01T10:00:00.000Z';
const MEDICAL_NECESSITY: AuthorizationReason = {
  system: X12_886,
  code: 'SBX-MN',
  text: 'Medical necessity not established for Jane Example',
};

const item = (sequence: number, status: AuthorizationItem['status'], reasons: AuthorizationReason[] = []) =>
  ({
    sequence,
    serviceCode: { system: 'http://www.ama-assn.org/go/cpt', code: '72148' },
    status,
    reviewActionCode: status === 'approved' ? 'A1' : 'A3',
    number: status === 'approved' ? `PA-1-${sequence}` : null,
    authorizedPeriod: status === 'approved' ? { start: '2026-03-02', end: '2026-03-06' } : null,
    authorizedQuantity: status === 'approved' ? { value: 1, unit: 'Units' } : null,
    reasons,
  }) satisfies AuthorizationItem;

const decided = (status: Authorization['status'], items: AuthorizationItem[], reasons: AuthorizationReason[] = []) =>
  ({
    status,
    number: status === 'denied' ? null : 'PA-1',
    decisionDate: '2026-03-01',
    lastCheckedAt: AT,
    channel: 'pas',
    items,
    reasons,
  }) satisfies Authorization;

const pending: Authorization = {
  status: 'pending',
  number: null,
  decisionDate: null,
  lastCheckedAt: null,
  channel: 'pas',
};

/** The history entry and event that setAuthorization writes for a change from pending to `next`. */
const changeTo = async (next: Authorization) => {
  const request: StoredRequest = {
    clientId: 'client-1',
    externalId: 'REQ-1',
    document: {},
    authorization: pending,
    version: 3,
    createdAt: AT,
    updatedAt: AT,
  };
  let written: { entry: AuthorizationChange; events: ServiceEvent[] } | undefined;
  await setAuthorization(
    {
      get: async () => request,
      setAuthorization: async (write) => {
        written = write.change;
      },
    },
    request,
    next,
    { kind: 'api', requestId: 'req-1' },
    AT,
  );
  const { entry, events } = written!;
  const event = events[0] as ServiceEvent<'authorization.status_changed'>;
  return { history: historyEntryOf(entry, { clientId: 'client-1' }), entry, event, data: event.data };
};

describe('a change into denied or partially_approved', () => {
  it('keeps every item and its reasons in the history, and only their codes in the event', async () => {
    const { history, data, event } = await changeTo(
      decided('partially_approved', [item(2, 'denied', [MEDICAL_NECESSITY]), item(1, 'approved')]),
    );
    expect(history.items).toEqual([
      { sequence: 1, status: 'approved', reasons: [] },
      { sequence: 2, status: 'denied', reasons: [MEDICAL_NECESSITY] },
    ]);
    expect(history.reasons).toEqual([]);
    expect(data.items).toEqual([
      { sequence: 1, status: 'approved', reasonCodes: [] },
      { sequence: 2, status: 'denied', reasonCodes: [{ system: X12_886, code: 'SBX-MN' }] },
    ]);
    expect(data.reasonCodes).toEqual([]);
    expect(JSON.stringify(payloadOf(event))).not.toContain('Jane');
    expect(webhookBodyErrors(event)).toEqual([]);
  });

  it('is explained by the reasons for the whole when the items carry none', async () => {
    const whole: AuthorizationReason = { system: null, code: 'note', text: 'Not a covered benefit for this member' };
    const { history, data, event } = await changeTo(decided('denied', [item(1, 'denied')], [whole]));
    expect(history.items).toEqual([{ sequence: 1, status: 'denied', reasons: [] }]);
    expect(history.reasons).toEqual([whole]);
    expect(data.reasonCodes).toEqual([{ system: null, code: 'note' }]);
    expect(JSON.stringify(payloadOf(event))).not.toContain('covered benefit');
    expect(webhookBodyErrors(event)).toEqual([]);
  });

  it('is explained by a header-only denial (no items) through its reasons for the whole', async () => {
    const { data, history } = await changeTo(decided('denied', [], [MEDICAL_NECESSITY]));
    expect(data.items).toEqual([]);
    expect(data.reasonCodes).toEqual([{ system: X12_886, code: 'SBX-MN' }]);
    expect(history.reasons).toEqual([MEDICAL_NECESSITY]);
  });
});

describe('any other change', () => {
  it('has no items and no reasons: an approval, a pend, a cancel', async () => {
    for (const status of ['approved', 'pending', 'cancelled'] as const) {
      const { history, data, entry } = await changeTo(decided(status, [item(1, 'approved')], [MEDICAL_NECESSITY]));
      expect([history.items, history.reasons, data.items, data.reasonCodes]).toEqual([[], [], [], []]);
      expect(entry.decision).toBeUndefined();
    }
  });

  it('reads an entry written before the history kept reasons as empty lists', async () => {
    const { entry } = await changeTo(decided('denied', [item(1, 'denied', [MEDICAL_NECESSITY])]));
    const { decision: _, ...older } = entry;
    expect(historyEntryOf(older, { clientId: 'client-1' })).toMatchObject({ items: [], reasons: [] });
  });
});

describe('the bounds (DECISION_LIMITS)', () => {
  const longReason = (n: number): AuthorizationReason => ({
    system: `https://codes.example/${'s'.repeat(200 - 22)}`,
    code: `${n}`.padStart(64, 'C'),
    text: 'é'.repeat(DECISION_LIMITS.reasonText),
  });
  const worst = () =>
    decided(
      'denied',
      Array.from({ length: DECISION_LIMITS.items + 5 }, (_, i) =>
        item(
          i + 1,
          'denied',
          Array.from({ length: DECISION_LIMITS.itemReasons + 5 }, (_, n) => longReason(n)),
        ),
      ),
      Array.from({ length: DECISION_LIMITS.reasons + 5 }, (_, n) => longReason(n)),
    );

  it('cuts items and reasons to the limits, and the worst case still fits the event schema', async () => {
    const { history, data, event } = await changeTo(worst());
    expect(history.items).toHaveLength(DECISION_LIMITS.items);
    expect(history.items.every((one) => one.reasons.length === DECISION_LIMITS.itemReasons)).toBe(true);
    expect(history.reasons).toHaveLength(DECISION_LIMITS.reasons);
    expect(data.items).toHaveLength(DECISION_LIMITS.items);
    expect(data.items.every((one) => one.reasonCodes.length === DECISION_LIMITS.eventItemReasonCodes)).toBe(true);
    expect(data.reasonCodes).toHaveLength(DECISION_LIMITS.reasons);
    expect(webhookBodyErrors(event)).toEqual([]);
  });

  it('gives a worst-case event under EventBridge’s 256 KB (docs/events.md states it)', async () => {
    const { event } = await changeTo(worst());
    const bytes = Buffer.byteLength(JSON.stringify(payloadOf(event)));
    expect(bytes).toBeGreaterThan(140_000);
    expect(bytes).toBeLessThan(170_000);
  });

  it('refuses a text in the event: the schema holds codes only', async () => {
    const { event } = await changeTo(decided('denied', [item(1, 'denied', [MEDICAL_NECESSITY])]));
    const payload = payloadOf(event);
    const data: EventData['authorization.status_changed'] = payload.data;
    const withText = {
      ...payload,
      data: { ...data, items: [{ ...data.items[0], reasonCodes: [MEDICAL_NECESSITY] }] },
    };
    expect(bodyErrors(event.type, withText)).not.toEqual([]);
    expect(bodyErrors(event.type, { ...payload, data: { ...data, reasonCodes: [MEDICAL_NECESSITY] } })).not.toEqual([]);
  });
});
