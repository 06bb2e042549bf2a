import type { RecheckThrough, ScheduledRecheck } from '#lib/entities/recheck';
import type { Authorization } from '#lib/entities/request';
import { InvalidTaskInput } from '#lib/runs/errors';

/*
 * What a re-check runs through (docs/rechecks.md, "On whose behalf"): the portal account or payer
 * connection of the run that read the undecided status, read from the schedule's item and from a
 * StartRecheckBatch task's input, each also as written before the channel was kept.
 */

/**
 * The schedule's account or connection. An item written before the channel was kept named either as
 * `portalAccountId`; the request's authorization says which channel last read it (a payer-API read
 * writes `channel: 'pas'`), and that read is what scheduled the re-check or kept it going. Undefined:
 * the item names neither, and the choice rules choose.
 */
export const throughOf = (
  recheck: Pick<ScheduledRecheck, 'channel' | 'portalAccountId' | 'payerConnectionId'>,
  readBy: Authorization['channel'],
): RecheckThrough | undefined => {
  const { channel, portalAccountId, payerConnectionId } = recheck;
  if (channel === 'pas') return payerConnectionId ? { channel, payerConnectionId } : undefined;
  if (channel === 'portal') return portalAccountId ? { channel, portalAccountId } : undefined;
  if (!portalAccountId) return undefined;
  return readBy === 'pas'
    ? { channel: 'pas', payerConnectionId: portalAccountId }
    : { channel: 'portal', portalAccountId };
};

const isId = (value: unknown): value is string => typeof value === 'string' && value !== '';

/**
 * A task input's `through`, checked: a channel and its id. An input without one but with a
 * `portalAccountId` (a selection made before the channel was kept) names a portal account: if it was
 * a connection's id, no such account exists and the choice rules choose, as they did then.
 */
export const throughInputOf = (input: Record<string, unknown>): RecheckThrough | undefined => {
  const { through, portalAccountId } = input;
  if (through === undefined) return isId(portalAccountId) ? { channel: 'portal', portalAccountId } : undefined;
  const given = (typeof through === 'object' && through !== null ? through : {}) as Record<string, unknown>;
  if (given.channel === 'portal' && isId(given.portalAccountId)) {
    return { channel: 'portal', portalAccountId: given.portalAccountId };
  }
  if (given.channel === 'pas' && isId(given.payerConnectionId)) {
    return { channel: 'pas', payerConnectionId: given.payerConnectionId };
  }
  throw new InvalidTaskInput('through');
};
