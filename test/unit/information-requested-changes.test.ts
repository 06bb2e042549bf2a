import { describe, expect, it } from 'vitest';
import type { AuthorizationChange } from '#lib/entities/authorization-history';
import type { Authorization, InformationRequested, StoredRequest } from '#lib/entities/request';
import type { ServiceEvent } from '#lib/entities/service-event';
import { setAuthorization } from '#lib/requests/authorization-changes';
import { historyEntryOf } from '#lib/requests/authorization-history';
import { webhookBodyErrors } from '#test/support/webhook-bodies';

/*
 * A request for more information as a change (lib/requests/information-requests.ts, through
 * setAuthorization): a new one keeps a history entry and sends authorization.information_requested even
 * when the status stays pending; the same one read again changes nothing and keeps its requestedAt.
 */
const EARLIER = '2026-03-01T09:00:00.000Z';
const AT = '2026-03-01T10:00:00.000Z';
const LOINC = 'http://loinc.org';

const asked = (requestedAt: string, codes: string[], dueBy: string | null = '2026-03-15'): InformationRequested => ({
  requestedAt,
  dueBy,
  items: codes.map((code, index) => ({
    code: { system: LOINC, code },
    text: `Send the ${code} of Jane Example`,
    sequence: index === 0 ? 1 : null,
  })),
});

const pending = (informationRequested: InformationRequested | null = null): Authorization => ({
  status: 'pending',
  number: null,
  decisionDate: null,
  lastCheckedAt: EARLIER,
  channel: 'pas',
  informationRequested,
});

/** What setAuthorization writes when `before` is stored and `next` is read. */
const write = async (before: Authorization, next: Authorization) => {
  const request: StoredRequest = {
    clientId: 'client-1',
    externalId: 'REQ-1',
    document: {},
    authorization: before,
    version: 3,
    createdAt: EARLIER,
    updatedAt: EARLIER,
  };
  let written: { authorization: Authorization; change?: { entry: AuthorizationChange; events: ServiceEvent[] } };
  await setAuthorization(
    {
      get: async () => request,
      setAuthorization: async (w) => {
        written = w;
      },
    },
    request,
    next,
    { kind: 'api', requestId: 'req-1' },
    AT,
  );
  return written!;
};

describe('a request for more information', () => {
  it('on a request that stays pending: one entry and only authorization.information_requested, codes only', async () => {
    const { authorization, change } = await write(pending(), {
      ...pending(asked(AT, ['18776-5', '11506-3'])),
      lastCheckedAt: AT,
    });
    expect(authorization.informationRequested?.requestedAt).toBe(AT);
    expect(change!.events.map((event) => event.type)).toEqual(['authorization.information_requested']);
    const [event] = change!.events;
    expect(event!.data).toEqual({
      requestExternalId: 'REQ-1',
      dueBy: '2026-03-15',
      items: [
        { system: LOINC, code: '18776-5', sequence: 1 },
        { system: LOINC, code: '11506-3', sequence: null },
      ],
    });
    expect(JSON.stringify(event)).not.toContain('Jane');
    expect(webhookBodyErrors(event!)).toEqual([]);
    const history = historyEntryOf(change!.entry, { clientId: 'client-1' });
    expect(history).toMatchObject({ previous: { status: 'pending' }, current: { status: 'pending' } });
    expect(history.informationRequested).toEqual(authorization.informationRequested);
  });

  it('read again the same: no entry, no event, and it keeps when it was first read', async () => {
    const stored = asked(EARLIER, ['18776-5']);
    const { authorization, change } = await write(pending(stored), {
      ...pending(asked(AT, ['18776-5'])),
      lastCheckedAt: AT,
    });
    expect(change).toBeUndefined();
    expect(authorization.informationRequested).toEqual(stored);
    expect(authorization.lastCheckedAt).toBe(AT);
  });

  it('asking for something else, or by another date, is a new request: a new event', async () => {
    for (const next of [asked(AT, ['18776-5', '11506-3']), asked(AT, ['18776-5'], '2026-03-20')]) {
      const { authorization, change } = await write(pending(asked(EARLIER, ['18776-5'])), pending(next));
      expect(change!.events.map((event) => event.type)).toEqual(['authorization.information_requested']);
      expect(authorization.informationRequested?.requestedAt).toBe(AT);
    }
  });

  it('with a new decision: both events in the one change; gone once decided, with no event of its own', async () => {
    const submitted: Authorization = { ...pending(), status: 'not_submitted' };
    const first = await write(submitted, pending(asked(AT, ['18776-5'])));
    expect(first.change!.events.map((event) => event.type)).toEqual([
      'authorization.status_changed',
      'authorization.information_requested',
    ]);
    const approved: Authorization = { ...pending(), status: 'approved', number: 'PA-1', decisionDate: '2026-03-02' };
    const decided = await write(pending(asked(EARLIER, ['18776-5'])), approved);
    expect(decided.change!.events.map((event) => event.type)).toEqual(['authorization.status_changed']);
    expect(decided.authorization.informationRequested).toBeNull();
    expect(decided.change!.entry.informationRequested).toBeUndefined();
  });
});
