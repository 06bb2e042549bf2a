import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { VersionConflict } from '#lib/concurrency';
import { changedByRun } from '#lib/entities/authorization-history';
import type { Authorization } from '#lib/entities/request';
import type { RpaBatchRecord, RpaRunRecord } from '#lib/entities/rpa';
import type { ServiceEvent } from '#lib/entities/service-event';
import { EVENT_ID_PATTERN, newEvent } from '#lib/events/events';
import { OUTBOX_RETENTION_SECONDS } from '#lib/events/outbox';
import { uuidv7 } from '#lib/ids';
import { setAuthorization } from '#lib/requests/authorization-changes';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { closeBatch } from '#lib/runs/run-changes';
import { finisherOf, runRecorder } from '#lib/runs/run-recorder';
import { shardOf } from '#lib/table-shards';
import { newTenant } from '#test/support/api';
import { historyItemsOf, outboxEventsOf, outboxItem, outboxItemsOf, webhookBodyErrors } from './events-support.ts';
import { newRequest, storedRun } from './rpa-support.ts';

/*
 * The transactional outbox (docs/events.md) on the test stack's table, through the real stores: each
 * write that changes an authorization, finishes a run or closes a batch writes its event in the same
 * transaction, and a write that is refused writes none. The stack's relay hands the events on as they
 * come (its default delivery logs their ids): the last test follows one through it.
 */
let tenant: Awaited<ReturnType<typeof newTenant>>;
beforeAll(async () => {
  tenant = await newTenant('events-outbox');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
const approved = (lastCheckedAt: string, number = 'AUTH-1'): Authorization => ({
  status: 'approved',
  number,
  decisionDate: '2026-02-20',
  lastCheckedAt,
});
const NOT_SUBMITTED = { status: 'not_submitted', number: null, decisionDate: null };
const decision = ({ status, number, decisionDate }: Authorization) => ({ status, number, decisionDate });

describe('an authorization that changes', () => {
  it('is written with its history entry and its authorization.status_changed event, all in one transaction', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const ref = { clientId: tenant.clientId, externalId };
    const runId = uuidv7();
    const first = at();
    const before = await outboxEventsOf(tenant.clientId);

    const changedBy = changedByRun({ runId, organizationId: tenant.organizationId });
    expect(await setAuthorization(dynamoRequestStore, ref, approved(first), changedBy, first)).toBe(true);
    const request = await dynamoRequestStore.get(tenant.clientId, externalId);
    expect(request).toMatchObject({ authorization: approved(first), version: 2, updatedAt: first });

    const [entry, ...more] = await historyItemsOf(tenant.clientId, externalId);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      entity: 'AuthorizationChange',
      changedAt: first,
      previous: NOT_SUBMITTED,
      current: decision(approved(first)),
      changedBy: { kind: 'run', runId, organizationId: tenant.organizationId },
    });
    expect(entry!.sk).toBe(`AUTHZ#${first}#${entry!.changeId}`);

    const events = (await outboxEventsOf(tenant.clientId)).filter((event) => !before.some((b) => b.id === event.id));
    expect(events).toEqual([
      {
        id: expect.stringMatching(new RegExp(EVENT_ID_PATTERN)),
        type: 'authorization.status_changed',
        clientId: tenant.clientId,
        runOrganizationId: tenant.organizationId,
        occurredAt: first,
        data: {
          requestExternalId: externalId,
          previous: NOT_SUBMITTED,
          current: decision(approved(first)),
          runId,
          items: [],
          reasonCodes: [],
        },
      },
    ]);
    expect(webhookBodyErrors(events[0]!)).toEqual([]);
    // Kept 7 days from the change (the table's TTL), under the client's own key.
    const item = await outboxItem(events[0]!);
    expect(item).toMatchObject({
      pk: `CLIENT#${tenant.clientId}#EVENT#${events[0]!.id}`,
      sk: 'OUTBOX',
      // The client's events by time, for its whole life (replay-events: docs/events.md).
      gsi2pk: `CLIENT#${tenant.clientId}#EVENTS`,
      gsi2sk: `${first}#${events[0]!.id}`,
      type: 'authorization.status_changed',
      expiration: Math.floor(Date.parse(first) / 1000) + OUTBOX_RETENTION_SECONDS,
    });
  });

  it('writes neither entry nor event when a check reads the same decision again: only lastCheckedAt moves', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const ref = { clientId: tenant.clientId, externalId };
    const changedBy = { kind: 'run', runId: uuidv7() } as const;
    await setAuthorization(dynamoRequestStore, ref, approved(at()), changedBy, at());
    const events = (await outboxEventsOf(tenant.clientId)).length;

    const later = at(1000);
    expect(await setAuthorization(dynamoRequestStore, ref, approved(later), changedBy, later)).toBe(true);
    expect(await dynamoRequestStore.get(tenant.clientId, externalId)).toMatchObject({
      authorization: approved(later),
      version: 3,
    });
    expect(await historyItemsOf(tenant.clientId, externalId)).toHaveLength(1);
    expect(await outboxEventsOf(tenant.clientId)).toHaveLength(events);

    // A new number is a change: a second entry and event.
    const renumbered = at(2000);
    await setAuthorization(dynamoRequestStore, ref, approved(renumbered, 'AUTH-2'), changedBy, renumbered);
    const history = await historyItemsOf(tenant.clientId, externalId);
    expect(history.map((item) => [(item.previous as any).number, (item.current as any).number])).toEqual([
      [null, 'AUTH-1'],
      ['AUTH-1', 'AUTH-2'],
    ]);
    expect(await outboxEventsOf(tenant.clientId)).toHaveLength(events + 1);
  });

  it('writes no entry and no event when the write is refused (the request changed since, or is gone)', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const request = (await dynamoRequestStore.get(tenant.clientId, externalId))!;
    const when = at();
    const event = newEvent('authorization.status_changed', tenant.clientId, when, {
      requestExternalId: externalId,
      previous: { status: 'not_submitted', number: null, decisionDate: null },
      current: decision(approved(when)),
      runId: null,
      items: [],
      reasonCodes: [],
    });
    const entry = {
      clientId: tenant.clientId,
      externalId,
      changeId: uuidv7(),
      changedAt: when,
      previous: event.data.previous,
      current: event.data.current,
      changedBy: { kind: 'api' as const, requestId: 'req-1' },
      version: 1,
      createdAt: when,
      updatedAt: when,
    };
    const write = { clientId: tenant.clientId, externalId, authorization: approved(when), now: when };

    // Read at version 1, changed since (a replace of the document): refused, nothing of it written.
    await dynamoRequestStore.putDocument(tenant.clientId, externalId, request.document, {
      mustExist: true,
      initialAuthorization: request.authorization,
      now: when,
    });
    await expect(
      dynamoRequestStore.setAuthorization({ ...write, version: 1, change: { entry, events: [event] } }),
    ).rejects.toBeInstanceOf(VersionConflict);
    expect(await historyItemsOf(tenant.clientId, externalId)).toEqual([]);
    expect(await outboxItem(event)).toBeUndefined();
    expect(await dynamoRequestStore.get(tenant.clientId, externalId)).toMatchObject({
      authorization: request.authorization,
      version: 2,
    });

    // No such request: nothing at all.
    const missing = { ...write, externalId: `${externalId}-missing`, version: 1 };
    await expect(
      dynamoRequestStore.setAuthorization({ ...missing, change: { entry, events: [event] } }),
    ).rejects.toBeInstanceOf(VersionConflict);
    expect(await outboxItem(event)).toBeUndefined();
    expect(
      await setAuthorization(dynamoRequestStore, missing, approved(when), { kind: 'api', requestId: 'r' }, when),
    ).toBe(false);
  });

  it('is all or none: when the event cannot be written, neither is the authorization nor its entry', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const when = at();
    const changedBy = { kind: 'run', runId: uuidv7() } as const;
    await setAuthorization(
      dynamoRequestStore,
      { clientId: tenant.clientId, externalId },
      approved(when),
      changedBy,
      when,
    );
    const [taken] = (await outboxEventsOf(tenant.clientId)).filter(
      (event) => event.type === 'authorization.status_changed' && event.data.requestExternalId === externalId,
    );
    const stored = (await dynamoRequestStore.get(tenant.clientId, externalId))!;

    // The same event id again: its outbox put is refused, so the whole transaction is.
    const later = at(1000);
    const entry = {
      clientId: tenant.clientId,
      externalId,
      changeId: uuidv7(),
      changedAt: later,
      previous: decision(stored.authorization),
      current: { status: 'denied' as const, number: null, decisionDate: '2026-02-21' },
      changedBy,
      version: 1,
      createdAt: later,
      updatedAt: later,
    };
    await expect(
      dynamoRequestStore.setAuthorization({
        clientId: tenant.clientId,
        externalId,
        authorization: { ...entry.current, lastCheckedAt: later },
        version: stored.version,
        now: later,
        change: { entry, events: [{ ...(taken as ServiceEvent<'authorization.status_changed'>), occurredAt: later }] },
      }),
    ).rejects.toBeInstanceOf(VersionConflict);
    expect(await dynamoRequestStore.get(tenant.clientId, externalId)).toEqual(stored);
    expect(await historyItemsOf(tenant.clientId, externalId)).toHaveLength(1);
  });
});

describe('a run that finishes', () => {
  it('writes automation.run_finished with its end, once however often it is finished', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const batchId = crypto.randomUUID();
    const run = await storedRun(tenant, externalId, {
      kind: 'check-auth-status',
      batchId,
      status: 'running',
      outcome: undefined,
    });
    const ref = { clientId: tenant.clientId, externalId, runId: run.runId };
    const finish = finisherOf({ runs: dynamoRunStore });

    expect(await finish(ref, 'status_read')).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
    expect(await finish(ref, 'portal_error')).toMatchObject({ outcome: 'status_read' });
    const ended = await dynamoRunStore.getRun(ref);
    const events = (await outboxEventsOf(tenant.clientId)).filter(
      (event) => event.type === 'automation.run_finished' && event.data.runId === run.runId,
    );
    expect(events).toEqual([
      {
        id: expect.stringMatching(new RegExp(EVENT_ID_PATTERN)),
        type: 'automation.run_finished',
        clientId: tenant.clientId,
        occurredAt: ended!.updatedAt,
        data: {
          requestExternalId: externalId,
          runId: run.runId,
          kind: 'check-auth-status',
          outcome: 'status_read',
          batchId,
        },
        // Routing, not payload: which organization's subscriptions may receive it.
        organizationId: ended!.organizationId,
      },
    ]);
    expect(webhookBodyErrors(events[0]!)).toEqual([]);
  });

  it('writes no event when the run write is refused', async () => {
    const externalId = await newRequest(tenant.apiKey);
    const run = await storedRun(tenant, externalId, { status: 'running', outcome: undefined });
    const finished: RpaRunRecord = { ...run, status: 'succeeded', outcome: 'form_filled', version: 2 };
    const event = newEvent('automation.run_finished', tenant.clientId, at(), {
      requestExternalId: externalId,
      runId: run.runId,
      kind: run.kind,
      outcome: 'form_filled',
      batchId: null,
    });
    await dynamoRunStore.updateRun({ ...run, version: 2 });
    await expect(dynamoRunStore.updateRun(finished, [event])).rejects.toBeInstanceOf(VersionConflict);
    expect(await outboxItem(event)).toBeUndefined();
    expect(await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId })).toMatchObject({
      status: 'running',
      version: 2,
    });
  });
});

describe('a batch that closes', () => {
  const batchOf = async (statuses: Array<'succeeded' | 'failed' | 'running'>) => {
    const batchId = crypto.randomUUID();
    const runs: RpaRunRecord[] = [];
    for (const status of statuses) {
      const externalId = await newRequest(tenant.apiKey);
      runs.push(
        await storedRun(tenant, externalId, {
          kind: 'check-auth-status',
          batchId,
          status,
          outcome: status === 'succeeded' ? 'status_read' : status === 'failed' ? 'wrong_password' : undefined,
        }),
      );
    }
    const when = at();
    const batch: RpaBatchRecord = {
      clientId: tenant.clientId,
      batchId,
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      items: runs.map((run) => ({ requestExternalId: run.externalId, runId: run.runId })),
      status: 'running',
      version: 1,
      createdAt: when,
      updatedAt: when,
    };
    await dynamoRunStore.createBatch(batch);
    return { batch, runs };
  };
  const batchEvents = async (batchId: string) =>
    (await outboxEventsOf(tenant.clientId)).filter(
      (event) =>
        (event.type === 'automation.batch_finished' && event.data.batchId === batchId) ||
        (event.type === 'automation.run_finished' && event.data.batchId === batchId),
    );

  it('writes automation.batch_finished with its runs counted by how they ended, once', async () => {
    const { batch } = await batchOf(['succeeded', 'succeeded', 'failed']);
    const closed = await closeBatch(dynamoRunStore, tenant.clientId, batch.batchId);
    expect(closed).toMatchObject({ status: 'done', finishedAt: expect.any(String) });
    await closeBatch(dynamoRunStore, tenant.clientId, batch.batchId);
    const events = await batchEvents(batch.batchId);
    expect(events).toEqual([
      {
        id: expect.stringMatching(new RegExp(EVENT_ID_PATTERN)),
        type: 'automation.batch_finished',
        clientId: tenant.clientId,
        occurredAt: closed!.updatedAt,
        data: { batchId: batch.batchId, total: 3, counts: { succeeded: 2, failed: 1 } },
        organizationId: batch.organizationId,
      },
    ]);
    expect(webhookBodyErrors(events[0]!)).toEqual([]);
  });

  it('FinishBatch fails a run left unended, then closes: that run finished, then the batch, each with its event', async () => {
    const { batch, runs } = await batchOf(['succeeded', 'running']);
    await runRecorder({ runs: dynamoRunStore }).finishBatch({ clientId: tenant.clientId, batchId: batch.batchId });
    const events = await batchEvents(batch.batchId);
    expect(events.map((event) => [event.type, event.data])).toEqual([
      [
        'automation.run_finished',
        {
          requestExternalId: runs[1]!.externalId,
          runId: runs[1]!.runId,
          kind: 'check-auth-status',
          outcome: 'portal_error',
          batchId: batch.batchId,
        },
      ],
      ['automation.batch_finished', { batchId: batch.batchId, total: 2, counts: { succeeded: 1, failed: 1 } }],
    ]);
  });
});

describe("the test stack's relay", () => {
  it('hands each event over once (to webhook delivery, logging its id) and marks it relayed', async () => {
    const other = await newTenant('events-relayed');
    const externalId = await newRequest(other.apiKey);
    const when = at();
    await setAuthorization(
      dynamoRequestStore,
      { clientId: other.clientId, externalId },
      approved(when),
      { kind: 'run', runId: uuidv7() },
      when,
    );
    const [event] = await outboxEventsOf(other.clientId);
    expect(event?.type).toBe('authorization.status_changed');

    const deadline = Date.now() + 10_000;
    let item = await outboxItem(event!);
    while (item?.relayedAt === undefined && Date.now() < deadline) {
      await sleep(50);
      item = await outboxItem(event!);
    }
    expect(item).toMatchObject({ relayedAt: expect.any(String), version: 2 });
    // Out of the pending index: never read as pending again.
    expect(item).not.toHaveProperty('gsi1pk');
    expect(item).not.toHaveProperty('gsi1sk');
    expect((await outboxItemsOf(other.clientId)).length).toBe(1);

    const output = readFileSync(inject('stackOutputFile'), 'utf8');
    const lines = output.split('\n').filter((line) => line.includes(`"eventId":"${event!.id}"`));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      message: 'Event relayed',
      eventType: 'authorization.status_changed',
      clientId: other.clientId,
    });
    // Ids only: not the request's id, nor the decision.
    expect(lines[0]).not.toContain(externalId);
    expect(lines[0]).not.toContain('AUTH-1');
  });

  it("spreads one client's events over the shards, and hands every one over, oldest first", async () => {
    const busy = await newTenant('events-sharded');
    const externalId = await newRequest(busy.apiKey);
    const ref = { clientId: busy.clientId, externalId };
    // One event per change: a new authorization number each time, a millisecond apart at least.
    for (let n = 1; n <= 40; n++) {
      const when = at(n);
      await setAuthorization(
        dynamoRequestStore,
        ref,
        approved(when, `AUTH-${n}`),
        { kind: 'api', requestId: 'r' },
        when,
      );
    }
    const items = await outboxItemsOf(busy.clientId);
    expect(items).toHaveLength(40);
    for (const item of items) expect(item.shard).toBe(shardOf(busy.clientId, String(item.eventId)));
    // 40 events of one client over 8 shards reach fewer than 5 of them about once in a billion.
    expect(new Set(items.map((item) => item.shard)).size).toBeGreaterThanOrEqual(5);

    const deadline = Date.now() + 20_000;
    let relayed = 0;
    while (relayed < 40 && Date.now() < deadline) {
      await sleep(100);
      relayed = (await outboxItemsOf(busy.clientId)).filter((item) => item.relayedAt !== undefined).length;
    }
    expect(relayed).toBe(40);
    const output = readFileSync(inject('stackOutputFile'), 'utf8').split('\n');
    const handedOver = output
      .filter((line) => line.includes('"message":"Event relayed"') && line.includes(`"clientId":"${busy.clientId}"`))
      .map((line) => JSON.parse(line).eventId);
    expect(handedOver).toEqual(items.map((item) => item.eventId));
  });
});
