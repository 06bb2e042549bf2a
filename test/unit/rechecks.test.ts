import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recheckEntity, type ScheduledRecheck } from '#lib/entities/recheck';
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
import { throughOf } from '#lib/rechecks/recheck-through';
import { type DueRecheck, groupsOf, recheckGroupOf } from '#lib/rechecks/rechecks';
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
  channel: 'portal',
  portalAccountId: 'a1',
  version: 1,
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
  ...over,
});
const due = (scheduled: ScheduledRecheck): DueRecheck => ({
  recheck: scheduled,
  through: throughOf(scheduled, 'portal'),
});

describe('re-check batches', () => {
  it('group requests by client, client user and the account or connection that read them, at most 25 to a batch', () => {
    const groups = groupsOf(
      [
        ...Array.from({ length: 27 }, (_, i) => recheck(`R${i}`)),
        recheck('OTHER-ACCOUNT', { portalAccountId: 'a2' }),
        recheck('OTHER-USER', { clientUserId: 'u2' }),
        recheck('OTHER-CLIENT', { clientId: 'c2' }),
        // A connection whose id is an account's: another channel, another group.
        recheck('CONNECTION', { channel: 'pas', portalAccountId: undefined, payerConnectionId: 'a1' }),
      ].map(due),
    );
    expect(groups.map((group) => group.requestExternalIds.length)).toEqual([25, 2, 1, 1, 1, 1]);
    expect(groups[0]).toEqual({
      clientId: 'c1',
      organizationId: 'o1',
      clientUserId: 'u1',
      through: { channel: 'portal', portalAccountId: 'a1' },
      requestExternalIds: Array.from({ length: 25 }, (_, i) => `R${i}`),
    });
    expect(groups.slice(2).map((group) => group.requestExternalIds)).toEqual([
      ['OTHER-ACCOUNT'],
      ['OTHER-USER'],
      ['OTHER-CLIENT'],
      ['CONNECTION'],
    ]);
    expect(groups[5]!.through).toEqual({ channel: 'pas', payerConnectionId: 'a1' });
  });

  it('read the account or connection of a schedule, and one written before the channel was kept by the request’s channel', () => {
    expect(throughOf(recheck('R'), 'pas')).toEqual({ channel: 'portal', portalAccountId: 'a1' });
    const pas = recheck('R', { channel: 'pas', portalAccountId: undefined, payerConnectionId: 'pc1' });
    expect(throughOf(pas, 'portal')).toEqual({ channel: 'pas', payerConnectionId: 'pc1' });
    // The old way: one id, `portalAccountId`, whatever the channel.
    const legacy = recheck('R', { channel: undefined, portalAccountId: 'x1' });
    expect(throughOf(legacy, 'pas')).toEqual({ channel: 'pas', payerConnectionId: 'x1' });
    expect(throughOf(legacy, 'portal')).toEqual({ channel: 'portal', portalAccountId: 'x1' });
    expect(throughOf(legacy, undefined)).toEqual({ channel: 'portal', portalAccountId: 'x1' });
    expect(throughOf(recheck('R', { channel: undefined, portalAccountId: undefined }), 'pas')).toBeUndefined();
  });

  it('read an item written the old way, and write the channel with its one id', () => {
    const item = recheckEntity.toItem(recheck('R1'));
    expect(item).toMatchObject({ channel: 'portal', portalAccountId: 'a1' });
    expect(item).not.toHaveProperty('payerConnectionId');
    const { channel: _, ...old } = item;
    const read = recheckEntity.fromItem(old);
    expect(read.channel).toBeUndefined();
    expect(read.portalAccountId).toBe('a1');
  });

  it('take ids only from a task input, and refuse anything else', () => {
    const group = {
      clientId: 'c1',
      organizationId: 'o1',
      clientUserId: 'u1',
      through: { channel: 'pas', payerConnectionId: 'pc1' },
      requestExternalIds: ['R1'],
    };
    expect(recheckGroupOf({ ...group, extra: 'dropped' })).toEqual(group);
    expect(recheckGroupOf({ ...group, through: { channel: 'portal', portalAccountId: 'a1', more: 1 } })).toEqual({
      ...group,
      through: { channel: 'portal', portalAccountId: 'a1' },
    });
    // A group selected before the channel was kept names a portal account; none at all: the rules choose.
    const { through: _, ...unpinned } = group;
    expect(recheckGroupOf({ ...unpinned, portalAccountId: 'a1' })).toEqual({
      ...unpinned,
      through: { channel: 'portal', portalAccountId: 'a1' },
    });
    expect(recheckGroupOf(unpinned)).toEqual(unpinned);
    for (const bad of [
      { ...group, clientId: 7 },
      { ...group, requestExternalIds: [] },
      { ...group, requestExternalIds: ['R1', 2] },
      { ...group, requestExternalIds: Array.from({ length: 26 }, (_, i) => `R${i}`) },
      { ...group, through: { channel: 'pas', portalAccountId: 'a1' } },
      { ...group, through: { channel: 'fax', payerConnectionId: 'pc1' } },
      { ...group, through: { channel: 'portal', portalAccountId: '' } },
      { ...group, through: 'a1' },
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
