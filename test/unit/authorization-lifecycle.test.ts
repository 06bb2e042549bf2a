import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AUTHORIZATION_STATUSES, type Authorization, type StoredRequest } from '#lib/entities/request';
import { EVENT_TYPES } from '#lib/entities/service-event';
import { EVENT_DOCS, eventSchemas } from '#lib/events/event-schemas';
import { log } from '#lib/observability/logger';
import { setAuthorization } from '#lib/requests/authorization-changes';
import {
  isListedTransition,
  LIFECYCLE,
  LIFECYCLE_STATES,
  LIFECYCLE_TRIGGERS,
  nextStatesOf,
  pairsOf,
} from '#lib/requests/authorization-lifecycle';
import { LIFECYCLE_DOCUMENT, lifecycleDocument } from '#scripts/authorization-lifecycle';

/*
 * The one table of the authorization's lifecycle (lib/requests/authorization-lifecycle.ts) held to the code:
 * the statuses, the event types and their webhooks, the generated document, and the runtime guard that
 * warns of a change the table does not list without refusing it.
 */
const document = JSON.parse(
  readFileSync(new URL('../../lib/openapi/generated/openapi.json', import.meta.url), 'utf8'),
) as { webhooks: Record<string, unknown> };

describe('the lifecycle table', () => {
  it('has every authorization status, each in some transition', () => {
    expect(Object.keys(LIFECYCLE_STATES).sort()).toEqual([...AUTHORIZATION_STATUSES].sort());
    const named = new Set(LIFECYCLE.flatMap((transition) => pairsOf(transition).flat()));
    for (const status of AUTHORIZATION_STATUSES) expect(named, status).toContain(status);
  });

  it('names only event types that exist, each with its schema and its webhooks entry', () => {
    const emitted = new Set(LIFECYCLE.map((transition) => transition.emits));
    expect([...emitted].sort()).toEqual(
      ['authorization.decision_overdue', 'authorization.information_requested', 'authorization.status_changed'].sort(),
    );
    for (const type of emitted) {
      expect(EVENT_TYPES).toContain(type);
      expect(eventSchemas[EVENT_DOCS[type].schema]).toBeDefined();
      expect(document.webhooks[type]).toBeDefined();
    }
  });

  it('uses every trigger; the portal only reads statuses', () => {
    expect(new Set(LIFECYCLE.flatMap((transition) => transition.by))).toEqual(new Set(Object.keys(LIFECYCLE_TRIGGERS)));
    for (const transition of LIFECYCLE.filter((t) => t.channels.includes('portal'))) {
      expect(transition.by).toEqual(['status-read']);
    }
  });

  it('lists the turns still being built: cancels, claim updates, information requests, deadlines', () => {
    expect(isListedTransition('pending', 'cancelled', 'pas')).toBe(true);
    expect(isListedTransition('approved', 'cancelled', 'pas')).toBe(true);
    expect(isListedTransition('approved', 'cancelled', 'portal')).toBe(false);
    for (const from of ['pending', 'approved', 'partially_approved'] as const) {
      expect(isListedTransition(from, 'pending', 'pas'), from).toBe(true);
    }
    const turns = LIFECYCLE.filter((transition) => transition.to === 'same').map((transition) => transition.emits);
    expect(turns).toContain('authorization.information_requested');
    expect(turns).toContain('authorization.decision_overdue');
    // Final: a denial needs a new request; nothing but a re-read of the same status follows it.
    expect(nextStatesOf('denied')).toEqual(['denied']);
    expect(nextStatesOf('cancelled')).toEqual([]);
    expect(isListedTransition('denied', 'approved')).toBe(false);
  });

  it('is what docs/authorization-lifecycle.md says (npm run -s lifecycle writes it)', () => {
    expect(readFileSync(LIFECYCLE_DOCUMENT, 'utf8')).toBe(lifecycleDocument());
  });
});

describe('a change the table does not list', () => {
  afterEach(() => vi.restoreAllMocks());
  const AT = '2026-03-01T10:00:00.000Z';
  const state = (status: Authorization['status'], channel: 'pas' | 'portal'): Authorization => ({
    status,
    number: status === 'approved' ? 'PA-1' : null,
    decisionDate: status === 'pending' ? null : '2026-03-01',
    lastCheckedAt: AT,
    channel,
  });
  /** setAuthorization from `before` to `next`, by a run: what it wrote and what it warned. */
  const change = async (before: Authorization, next: Authorization) => {
    const warn = vi.spyOn(log, 'warn').mockImplementation(() => {});
    warn.mockClear();
    const request: StoredRequest = {
      clientId: 'client-1',
      externalId: 'REQ-1',
      document: { patient: { name: 'Jane Example' } },
      authorization: before,
      version: 2,
      createdAt: AT,
      updatedAt: AT,
    };
    const writes: Authorization[] = [];
    const store = {
      get: async () => request,
      setAuthorization: async (write: { authorization: Authorization }) => {
        writes.push(write.authorization);
      },
    };
    await setAuthorization(store, request, next, { kind: 'run', runId: 'run-1' }, AT);
    return { writes, warnings: warn.mock.calls };
  };

  it('is written all the same, and logged with ids and both statuses', async () => {
    const { writes, warnings } = await change(state('denied', 'pas'), state('approved', 'pas'));
    expect(writes.map((written) => written.status)).toEqual(['approved']);
    expect(warnings).toEqual([
      [
        'Authorization change not in the lifecycle',
        {
          clientId: 'client-1',
          requestExternalId: 'REQ-1',
          previousStatus: 'denied',
          status: 'approved',
          channel: 'pas',
          runId: 'run-1',
        },
      ],
    ]);
    expect(JSON.stringify(warnings)).not.toContain('Jane');
  });

  it('is checked against the channel that made it: a portal read cannot cancel', async () => {
    expect((await change(state('pending', 'portal'), state('cancelled', 'portal'))).warnings).toHaveLength(1);
    expect((await change(state('pending', 'pas'), state('cancelled', 'pas'))).warnings).toEqual([]);
  });

  it('a listed change, or no change at all, warns of nothing', async () => {
    expect((await change(state('pending', 'portal'), state('approved', 'portal'))).warnings).toEqual([]);
    expect((await change(state('approved', 'pas'), state('approved', 'pas'))).warnings).toEqual([]);
  });
});
