import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ScheduledRecheck } from '#lib/entities/recheck';
import type { AuthorizationStatus } from '#lib/entities/request';
import {
  expired,
  intervalSeconds,
  MAX_RECHECK_INTERVAL_SECONDS,
  RECHECK_FOR_DAYS,
  scheduleChange,
  secondsAfter,
} from '#lib/rechecks/recheck-policy';
import { RECHECK_SHARDS, recheckShardOf, recheckShards } from '#lib/rechecks/recheck-shards';
import { groupsOf, recheckGroupOf } from '#lib/rechecks/rechecks';
import { dueRechecksDefinition } from '#lib/rechecks/state-machine';
import { recheckTasks } from '#lib/routes/automation-tasks';
import { taskStatesOf } from '#lib/runs/state-machines';

const HOUR = 3600;

describe('re-check back-off', () => {
  it('waits the first interval, then twice as long each time, at most a day', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((done) => intervalSeconds(done, HOUR) / HOUR)).toEqual([1, 2, 4, 8, 16, 24, 24]);
    expect(intervalSeconds(0, 5)).toBe(5);
    expect(intervalSeconds(3, 5)).toBe(40);
  });

  it('never shrinks and never passes a day, whatever the first interval', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_RECHECK_INTERVAL_SECONDS }), fc.nat({ max: 60 }), (first, done) => {
        const pause = intervalSeconds(done, first);
        expect(pause).toBeGreaterThanOrEqual(Math.min(first, MAX_RECHECK_INTERVAL_SECONDS));
        expect(pause).toBeLessThanOrEqual(MAX_RECHECK_INTERVAL_SECONDS);
        expect(intervalSeconds(done + 1, first)).toBeGreaterThanOrEqual(pause);
      }),
    );
  });

  it('runs its course 30 days after the authorization became undecided', () => {
    const since = '2026-11-01T00:00:00.000Z';
    expect(RECHECK_FOR_DAYS).toBe(30);
    expect(expired(since, secondsAfter(since, 30 * 24 * HOUR - 1))).toBe(false);
    expect(expired(since, secondsAfter(since, 30 * 24 * HOUR))).toBe(true);
  });
});

describe('what a change of status does to the schedule', () => {
  const cases: Array<[AuthorizationStatus, AuthorizationStatus, 'start' | 'end' | 'keep']> = [
    ['not_submitted', 'pending', 'start'],
    ['not_submitted', 'not_found', 'start'],
    ['approved', 'pending', 'start'],
    ['pending', 'approved', 'end'],
    ['pending', 'partially_approved', 'end'],
    ['not_found', 'denied', 'end'],
    ['pending', 'cancelled', 'end'],
    ['pending', 'not_found', 'keep'],
    ['not_found', 'pending', 'keep'],
    ['approved', 'denied', 'keep'],
    ['not_submitted', 'approved', 'keep'],
  ];
  it.each(cases)('%s → %s: %s', (previous, next, expected) => {
    expect(scheduleChange(previous, next)).toBe(expected);
  });
});

const recheck = (externalId: string, over: Partial<ScheduledRecheck> = {}): ScheduledRecheck => ({
  clientId: 'c1',
  externalId,
  shard: '0',
  since: '2026-11-01T00:00:00.000Z',
  checksDone: 0,
  dueAt: '2026-11-01T01:00:00.000Z',
  clientUserId: 'u1',
  organizationId: 'o1',
  portalAccountId: 'a1',
  version: 1,
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
  ...over,
});

describe('re-check batches', () => {
  it('group requests by client, client user and portal account, at most 25 to a batch', () => {
    const due = [
      ...Array.from({ length: 27 }, (_, i) => recheck(`R${i}`)),
      recheck('OTHER-ACCOUNT', { portalAccountId: 'a2' }),
      recheck('OTHER-USER', { clientUserId: 'u2' }),
      recheck('OTHER-CLIENT', { clientId: 'c2' }),
    ];
    const groups = groupsOf(due);
    expect(groups.map((group) => group.requestExternalIds.length)).toEqual([25, 2, 1, 1, 1]);
    expect(groups[0]).toEqual({
      clientId: 'c1',
      organizationId: 'o1',
      clientUserId: 'u1',
      portalAccountId: 'a1',
      requestExternalIds: Array.from({ length: 25 }, (_, i) => `R${i}`),
    });
    expect(groups.slice(2).map((group) => group.requestExternalIds)).toEqual([
      ['OTHER-ACCOUNT'],
      ['OTHER-USER'],
      ['OTHER-CLIENT'],
    ]);
  });

  it('take ids only from a task input, and refuse anything else', () => {
    const group = {
      clientId: 'c1',
      organizationId: 'o1',
      clientUserId: 'u1',
      portalAccountId: 'a1',
      requestExternalIds: ['R1'],
    };
    expect(recheckGroupOf({ ...group, extra: 'dropped' })).toEqual(group);
    for (const bad of [
      { ...group, clientId: 7 },
      { ...group, requestExternalIds: [] },
      { ...group, requestExternalIds: ['R1', 2] },
      { ...group, requestExternalIds: Array.from({ length: 26 }, (_, i) => `R${i}`) },
      null,
    ]) {
      expect(() => recheckGroupOf(bad)).toThrow(expect.objectContaining({ name: 'InvalidTaskInput' }));
    }
  });

  it('spread over the shards by request, each request always in one', () => {
    expect(recheckShards).toHaveLength(RECHECK_SHARDS);
    const shards = new Set(Array.from({ length: 400 }, (_, i) => recheckShardOf('c1', `R${i}`)));
    expect([...shards].sort()).toEqual([...recheckShards].sort());
    expect(recheckShardOf('c1', 'R1')).toBe(recheckShardOf('c1', 'R1'));
  });
});

describe('the DueRechecks state machine', () => {
  it('binds each Task to its declared function, and loops while more is due', () => {
    const resources = { SelectDueRechecks: 'arn:select', StartRecheckBatch: 'arn:start' };
    const definition = dueRechecksDefinition(resources);
    const tasks = taskStatesOf(definition);
    expect(Object.keys(tasks).sort()).toEqual(recheckTasks.map((task) => task.name).sort());
    expect(tasks.SelectDueRechecks!.Resource).toBe('arn:select');
    expect(tasks.StartRecheckBatch!.Resource).toBe('arn:start');
    expect(definition.States.MoreDue).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.more', BooleanEquals: true, Next: 'SelectDueRechecks' }],
    });
    expect(definition.States.StartEachBatch).toMatchObject({ ItemsPath: '$.groups', ResultPath: null });
  });
});
