import { describe, expect, it } from 'vitest';
import type { Authorization, StoredRequest } from '#lib/entities/request';
import { overdueOf } from '#lib/rechecks/decision-deadlines';
import { deadlineWatchOf } from '#lib/requests/authorization-changes';
import { shardOf } from '#lib/table-shards';

const at = '2026-03-01T09:00:00.000Z';
const due = '2026-03-08T09:00:00.000Z';
const authorization = (status: Authorization['status'], decisionDueAt?: string | null): Authorization => ({
  status,
  number: null,
  decisionDate: null,
  lastCheckedAt: at,
  channel: 'pas',
  ...(decisionDueAt !== undefined ? { decisionDueAt } : {}),
});
const requestWith = (current: Authorization): StoredRequest => ({
  clientId: 'c-1',
  externalId: 'REQ-1',
  document: {},
  authorization: current,
  version: 3,
  createdAt: at,
  updatedAt: at,
});

describe('the watch of a decision deadline', () => {
  it('starts when a submission records a deadline on an undecided request, in the request’s shard', () => {
    expect(deadlineWatchOf(requestWith(authorization('not_submitted')), authorization('pending', due), at)).toEqual({
      start: {
        clientId: 'c-1',
        externalId: 'REQ-1',
        shard: shardOf('c-1', 'REQ-1'),
        decisionDueAt: due,
        version: 1,
        createdAt: at,
        updatedAt: at,
      },
    });
  });

  it('starts anew for a new deadline, and not for a submission the payer decided at once or a payer without one', () => {
    const later = '2026-03-09T09:00:00.000Z';
    expect(
      deadlineWatchOf(requestWith(authorization('pending', due)), authorization('pending', later), at),
    ).toMatchObject({
      start: { decisionDueAt: later },
    });
    expect(
      deadlineWatchOf(requestWith(authorization('not_submitted')), authorization('approved', due), at),
    ).toBeUndefined();
    expect(
      deadlineWatchOf(requestWith(authorization('not_submitted')), authorization('pending', null), at),
    ).toBeUndefined();
  });

  it('goes on unchanged through an undecided read (pending, not found), and ends with a decision', () => {
    const pended = requestWith(authorization('pending', due));
    expect(deadlineWatchOf(pended, authorization('pending', due), at)).toBeUndefined();
    expect(deadlineWatchOf(pended, authorization('not_found', due), at)).toBeUndefined();
    for (const status of ['approved', 'denied', 'partially_approved', 'cancelled'] as const) {
      expect(deadlineWatchOf(pended, authorization(status, due), at), status).toEqual({ end: true });
    }
    expect(
      deadlineWatchOf(requestWith(authorization('approved', due)), authorization('denied', due), at),
    ).toBeUndefined();
  });
});

describe('a deadline that passed', () => {
  it('is a history entry that changes nothing and an event with ids, times and the status only', () => {
    const request = requestWith(authorization('pending', due));
    const deadline = {
      clientId: 'c-1',
      externalId: 'REQ-1',
      shard: '0',
      decisionDueAt: due,
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    const passedAt = '2026-03-08T09:10:00.000Z';
    const { entry, event } = overdueOf(request, deadline, passedAt);
    const state = { status: 'pending', number: null, decisionDate: null };
    expect(entry).toMatchObject({ changedAt: passedAt, previous: state, current: state });
    expect(entry.changedBy).toEqual({ kind: 'deadline', decisionDueAt: due });
    expect(event).toMatchObject({ type: 'authorization.decision_overdue', clientId: 'c-1', occurredAt: passedAt });
    expect(event.data).toEqual({ requestExternalId: 'REQ-1', decisionDueAt: due, status: 'pending' });
  });
});
