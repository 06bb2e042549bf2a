import { describe, expect, it } from 'vitest';
import type { Authorization } from '#lib/entities/request';
import { uuidv7 } from '#lib/ids';
import { setAuthorization } from '#lib/requests/authorization-changes';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { SANDBOX_DEMO_MEMBERS, SANDBOX_MEMBERS, SANDBOX_PAYER_ID, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { call, newTenant } from '#test/support/api';
import { type AnyEvent, outboxEventsOf, outboxItem, webhookBodyErrors } from './events-support.ts';
import {
  createPortalAccount,
  createRequest,
  getRequest,
  locationOf,
  pollUntil,
  settledBatch,
  startBatch,
  type Tenant,
} from './rpa-end-to-end-support.ts';
import { newRequest } from './rpa-support.ts';

/*
 * GET …/Requests/{externalId}/authorization/history over HTTP through the local gateway. First after
 * real status checks: check-auth-status batches run by the local Step Functions, the worker driving the
 * sandbox portal in headless Chromium; then its pages, cursors and refusals, on histories written by the
 * worker's own write path (setAuthorization).
 */
const historyOf = (tenant: { apiKey: string }, externalId: string, query = '') =>
  call('GET', `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}/authorization/history${query}`, {
    apiKey: tenant.apiKey,
  });

const NOT_SUBMITTED = { status: 'not_submitted', number: null, decisionDate: null };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const memberOf = (memberId: string) => SANDBOX_MEMBERS.find((member) => member.memberId === memberId)!;

describe('the authorization history after real status checks', () => {
  it('keeps one entry per change, with the run that read it; a check that reads the same answer adds none', async () => {
    const tenant: Tenant = await newTenant('history-e2e');
    await createPortalAccount(tenant, {
      externalId: 'sandbox-front-desk',
      payerIds: [SANDBOX_PAYER_ID],
      username: SANDBOX_USERS[0].username,
      password: SANDBOX_USERS[0].password,
    });
    const expected = {
      'DEMO-APPROVED': { status: 'approved', number: 'SBX-AUTH-000101', decisionDate: '2026-02-20' },
      'DEMO-PENDED': { status: 'pending', number: null, decisionDate: null },
      'DEMO-UNKNOWN': { status: 'not_found', number: null, decisionDate: null },
    } as const;
    const ids = Object.keys(expected) as Array<keyof typeof expected>;
    for (const id of ids) await createRequest(tenant, id, memberOf(SANDBOX_DEMO_MEMBERS[id]), SANDBOX_PAYER_ID);

    const started = new Date().toISOString();
    const first = await startBatch(tenant, ids);
    expect(first.status, first.text).toBe(202);
    const firstBatch = await settledBatch(tenant, locationOf(first));
    expect(firstBatch).toMatchObject({ total: 3, done: 3, failed: 0 });

    for (const [i, id] of ids.entries()) {
      const res = await historyOf(tenant, id);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        items: [
          {
            changeId: expect.stringMatching(UUID),
            changedAt: expect.any(String),
            previous: NOT_SUBMITTED,
            current: expected[id],
            changedBy: { kind: 'run', runId: firstBatch.items[i].runId },
            items: [],
            reasons: [],
            informationRequested: null,
          },
        ],
        pageSize: 25,
        nextCursor: null,
      });
      const { changedAt } = res.body.items[0];
      expect(changedAt >= started && changedAt <= firstBatch.finishedAt, id).toBe(true);
      expect((await getRequest(tenant, id)).authorization.lastCheckedAt).toBe(changedAt);
    }

    // The events the batch's writes left: one per change, per run and for the batch, each a valid webhook body.
    const byType = <T extends AnyEvent['type']>(events: AnyEvent[], type: T) =>
      events.filter((event): event is Extract<AnyEvent, { type: T }> => event.type === type);
    const afterFirst = await outboxEventsOf(tenant.clientId);
    expect(byType(afterFirst, 'authorization.status_changed').map((event) => event.data)).toEqual(
      ids.map((id, i) => ({
        requestExternalId: id,
        previous: NOT_SUBMITTED,
        current: expected[id],
        runId: firstBatch.items[i].runId,
        items: [],
        reasonCodes: [],
      })),
    );
    expect(byType(afterFirst, 'automation.run_finished').map((event) => event.data)).toEqual(
      ids.map((id, i) => ({
        requestExternalId: id,
        runId: firstBatch.items[i].runId,
        kind: 'check-auth-status',
        outcome: id === 'DEMO-UNKNOWN' ? 'not_found_on_portal' : 'status_read',
        batchId: firstBatch.batchId,
      })),
    );
    expect(byType(afterFirst, 'automation.batch_finished').map((event) => event.data)).toEqual([
      { batchId: firstBatch.batchId, total: 3, counts: { succeeded: 3, failed: 0 } },
    ]);
    for (const event of afterFirst) expect(webhookBodyErrors(event), event.type).toEqual([]);

    // The same answers again: the requests are checked (lastCheckedAt moves), their histories stay as they were.
    const second = await startBatch(tenant, ids);
    expect(second.status, second.text).toBe(202);
    const secondBatch = await settledBatch(tenant, locationOf(second));
    expect(secondBatch).toMatchObject({ total: 3, done: 3, failed: 0 });
    for (const id of ids) {
      const res = await historyOf(tenant, id);
      expect(res.body.items).toHaveLength(1);
      expect((await getRequest(tenant, id)).authorization.lastCheckedAt > res.body.items[0].changedAt).toBe(true);
    }
    const afterSecond = await outboxEventsOf(tenant.clientId);
    expect(byType(afterSecond, 'authorization.status_changed')).toHaveLength(3);
    expect(byType(afterSecond, 'automation.run_finished')).toHaveLength(6);
    expect(byType(afterSecond, 'automation.batch_finished').map((event) => event.data.batchId)).toEqual([
      firstBatch.batchId,
      secondBatch.batchId,
    ]);

    // The stack's relay hands every one of them over.
    const relayed = await pollUntil(
      () => Promise.all(afterSecond.map(async (event) => (await outboxItem(event))?.relayedAt)),
      (marks) => marks.every((mark) => typeof mark === 'string'),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(relayed.every((mark) => typeof mark === 'string')).toBe(true);
  }, 240_000); // two batches, each a browser session on the portal
});

describe('the authorization history, page by page', () => {
  /** A request whose authorization changed `n` times (the last by an API call), a minute apart, as the worker writes it. */
  const requestWithHistory = async (tenant: Tenant, n: number) => {
    const externalId = await newRequest(tenant.apiKey);
    const runIds: string[] = [];
    for (let i = 1; i <= n; i++) {
      const at = new Date(Date.UTC(2026, 2, 1, 9, i)).toISOString();
      const next: Authorization =
        i % 2 === 1
          ? { status: 'pending', number: null, decisionDate: null, lastCheckedAt: at }
          : { status: 'approved', number: `AUTH-${i}`, decisionDate: '2026-03-01', lastCheckedAt: at };
      const runId = uuidv7();
      runIds.push(runId);
      const changedBy =
        i === n ? ({ kind: 'api', requestId: 'req-history-test' } as const) : ({ kind: 'run', runId } as const);
      await setAuthorization(dynamoRequestStore, { clientId: tenant.clientId, externalId }, next, changedBy, at);
    }
    return { externalId, runIds };
  };

  it('answers newest first, pageSize at a time, until nextCursor is null', async () => {
    const tenant = await newTenant('history-pages');
    const { externalId, runIds } = await requestWithHistory(tenant, 7);

    const whole = await historyOf(tenant, externalId);
    expect(whole.status, whole.text).toBe(200);
    expect(whole.body.items).toHaveLength(7);
    expect(whole.body.nextCursor).toBeNull();
    const times = whole.body.items.map((item: { changedAt: string }) => item.changedAt);
    expect(times).toEqual([...times].sort().reverse());
    expect(whole.body.items[0]).toMatchObject({
      previous: { status: 'approved', number: 'AUTH-6', decisionDate: '2026-03-01' },
      current: { status: 'pending', number: null, decisionDate: null },
      changedBy: { kind: 'api', requestId: 'req-history-test' },
    });
    expect(whole.body.items[6]).toMatchObject({
      previous: NOT_SUBMITTED,
      changedBy: { kind: 'run', runId: runIds[0] },
    });

    const pages: unknown[][] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?pageSize=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await historyOf(tenant, externalId, query);
      expect(res.status, res.text).toBe(200);
      expect(res.body.pageSize).toBe(3);
      pages.push(res.body.items);
      cursor = res.body.nextCursor;
    } while (cursor && pages.length < 10);
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(whole.body.items);

    // A last page that is exactly full says so: no cursor to an empty page.
    const exact = await historyOf(tenant, externalId, '?pageSize=7');
    expect(exact.body).toMatchObject({ pageSize: 7, nextCursor: null });
    expect(exact.body.items).toHaveLength(7);
  });

  it('keeps the cursor to its request and page size, and refuses bad page sizes and tampered cursors (400)', async () => {
    const tenant = await newTenant('history-cursors');
    const { externalId } = await requestWithHistory(tenant, 3);
    const { externalId: another } = await requestWithHistory(tenant, 3);
    const first = await historyOf(tenant, externalId, '?pageSize=2');
    const cursor = encodeURIComponent(first.body.nextCursor);

    expect((await historyOf(tenant, externalId, `?cursor=${cursor}`)).body.items).toHaveLength(1);
    const otherSize = await historyOf(tenant, externalId, `?pageSize=3&cursor=${cursor}`);
    expect(otherSize.status).toBe(400);
    expect(otherSize.body.parameter).toBe('pageSize');
    const otherRequest = await historyOf(tenant, another, `?cursor=${cursor}`);
    expect(otherRequest.status).toBe(400);
    expect(otherRequest.body.parameter).toBe('cursor');
    const tampered = `${first.body.nextCursor.slice(0, -2)}AA`;
    expect((await historyOf(tenant, externalId, `?cursor=${encodeURIComponent(tampered)}`)).status).toBe(400);
    for (const bad of ['0', '101', 'abc', '2.5']) {
      const res = await historyOf(tenant, externalId, `?pageSize=${bad}`);
      expect(res.status, bad).toBe(400);
    }
    expect((await historyOf(tenant, 'a%23b')).status).toBe(400);
  });

  it("is a 404 for another client's request and for one that does not exist; empty for one never changed", async () => {
    const owner = await newTenant('history-owner');
    const stranger = await newTenant('history-stranger');
    const { externalId } = await requestWithHistory(owner, 2);

    const theirs = await historyOf(stranger, externalId);
    expect(theirs.status).toBe(404);
    expect(theirs.text).not.toContain('AUTH-2');
    expect((await historyOf(owner, `${externalId}-missing`)).status).toBe(404);
    // The same id under the stranger: its own request, with its own (empty) history.
    await createRequest(stranger, externalId, memberOf('SBX-10001'), SANDBOX_PAYER_ID);
    expect((await historyOf(stranger, externalId)).body).toEqual({ items: [], pageSize: 25, nextCursor: null });
    expect((await historyOf(owner, externalId)).body.items).toHaveLength(2);
  });
});
