import { describe, expect, it } from 'vitest';
import { SANDBOX_MEMBERS, SANDBOX_PAYER_ID, SANDBOX_SERVICE_FROM_DATE } from '#local/sandbox-portal/seed';
import { call, uniqueId } from '#test/support/api';
import { type AnyEvent, outboxEventsOf } from './events-support.ts';
import {
  automationTenant,
  createRequest,
  getRequest,
  locationOf,
  openSession,
  sandboxOperator,
  scraperAccess,
  settledBatch,
  startBatch,
  type Tenant,
} from './rpa-end-to-end-support.ts';

/*
 * A pended authorization decided on the payer portal, end to end: the sandbox's operator (docs/sandbox-portal.md,
 * "The operator") creates a pended authorization for a request of this test's own, a check-auth-status batch (the
 * local Step Functions, the worker driving the shared stack's sandbox portal in real headless Chromium) reads it
 * as pending, the operator decides it, and the next batch reads the decision into the request, its history and
 * its outbox, which the scraper session shows. The portal is every test file's: this test decides only the authorization it created.
 */
const member = SANDBOX_MEMBERS.find((candidate) => candidate.memberId === 'SBX-10003')!;

const operator = sandboxOperator;

const historyOf = (tenant: Tenant, externalId: string) =>
  call('GET', `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}/authorization/history`, {
    apiKey: tenant.apiKey,
  });

/** A batch of these requests, run to its end; its items. */
interface Item {
  runId: string;
  outcome: string;
  authorization: { status: string; number: string | null; decisionDate: string | null };
}
const checkedAll = async (tenant: Tenant, externalIds: string[]): Promise<Item[]> => {
  const started = await startBatch(tenant, externalIds);
  expect(started.status, started.text).toBe(202);
  const batch = await settledBatch(tenant, locationOf(started));
  expect(batch).toMatchObject({ total: externalIds.length, done: externalIds.length, failed: 0 });
  return batch.items;
};
const checked = async (tenant: Tenant, externalId: string) => (await checkedAll(tenant, [externalId]))[0]!;

/** A request of the tenant's whose authorization the operator created, pended, on the portal. */
const pendedRequest = async (tenant: Tenant, prefix: string) => {
  const externalId = uniqueId(prefix);
  const created = await operator('/operator/authorizations', {
    memberId: member.memberId,
    reference: externalId,
    fromDate: SANDBOX_SERVICE_FROM_DATE,
  });
  expect(created.status, await created.text()).toBe(303);
  await createRequest(tenant, externalId, member, SANDBOX_PAYER_ID);
  return externalId;
};

describe('a pended authorization decided by the portal’s operator, end to end', () => {
  it('reads pending, then the decision: the request, its history and an authorization.status_changed event', async () => {
    const tenant = await automationTenant('e2e-decision');
    const externalId = await pendedRequest(tenant, 'E2E-DECIDE');

    const first = await checked(tenant, externalId);
    expect(first).toMatchObject({
      outcome: 'status_read',
      authorization: { status: 'pended', number: null, decisionDate: null },
    });
    const pending = { status: 'pending', number: null, decisionDate: null };
    expect((await getRequest(tenant, externalId)).authorization).toMatchObject(pending);

    const decided = await operator('/operator/decisions', {
      memberId: member.memberId,
      reference: externalId,
      status: 'approved',
      number: 'SBX-AUTH-E2E-001',
      decisionDate: '2026-03-09',
    });
    expect(decided.status, await decided.text()).toBe(303);

    const second = await checked(tenant, externalId);
    const approved = { status: 'approved', number: 'SBX-AUTH-E2E-001', decisionDate: '2026-03-09' };
    expect(second).toMatchObject({ outcome: 'status_read', authorization: approved });
    expect((await getRequest(tenant, externalId)).authorization).toEqual({
      ...approved,
      lastCheckedAt: expect.any(String),
      channel: 'portal',
      items: [],
      reasons: [],
      decisionDueAt: null,
      informationRequested: null,
    });

    const history = await historyOf(tenant, externalId);
    expect(history.status, history.text).toBe(200);
    expect(history.body.items).toMatchObject([
      { previous: pending, current: approved, changedBy: { kind: 'run', runId: second.runId } },
      { previous: { status: 'not_submitted' }, current: pending, changedBy: { kind: 'run', runId: first.runId } },
    ]);

    // The scraper session shows the same history (JSON and the page): ids and statuses, newest first.
    const { accessToken, scraperUri } = await scraperAccess(tenant, externalId);
    const asJson = await openSession(scraperUri, accessToken);
    expect(asJson.status, asJson.text).toBe(200);
    expect(asJson.json().authorizationHistory).toEqual(history.body.items);
    const asHtml = await openSession(scraperUri, accessToken, { via: 'query', accept: 'text/html' });
    expect(asHtml.status).toBe(200);
    const rows = [...asHtml.text.matchAll(/<tr data-change-id="([^"]+)">(.*?)<\/tr>/g)];
    expect(rows.map((row) => row[1])).toEqual(history.body.items.map((item: { changeId: string }) => item.changeId));
    expect(rows[0]![2]).toContain(
      `<td>pending</td><td class="status">approved SBX-AUTH-E2E-001 decided 2026-03-09</td><td class="reasons"></td><td>run <code>${second.runId}</code></td>`,
    );
    expect(asHtml.text).not.toContain(member.firstName);

    const changes = (await outboxEventsOf(tenant.clientId)).filter(
      (event): event is Extract<AnyEvent, { type: 'authorization.status_changed' }> =>
        event.type === 'authorization.status_changed',
    );
    expect(changes.map((event) => event.data)).toEqual([
      {
        requestExternalId: externalId,
        previous: { status: 'not_submitted', number: null, decisionDate: null },
        current: pending,
        runId: first.runId,
        items: [],
        reasonCodes: [],
      },
      {
        requestExternalId: externalId,
        previous: pending,
        current: approved,
        runId: second.runId,
        items: [],
        reasonCodes: [],
      },
    ]);
  }, 180_000); // two batches, each a browser session on the portal

  it('reads a partial approval and a denial into the request’s own statuses', async () => {
    const tenant = await automationTenant('e2e-decision-others');
    const partly = await pendedRequest(tenant, 'E2E-PARTLY');
    const denied = await pendedRequest(tenant, 'E2E-DENIED');
    const pended = { status: 'pended', number: null, decisionDate: null };
    expect((await checkedAll(tenant, [partly, denied])).map((item) => item.authorization)).toEqual([pended, pended]);

    const decisions: Record<string, string>[] = [
      { reference: partly, status: 'partially_approved', number: 'SBX-AUTH-E2E-002', decisionDate: '2026-03-10' },
      { reference: denied, status: 'denied', decisionDate: '2026-03-11' },
    ];
    for (const decision of decisions) {
      const res = await operator('/operator/decisions', { memberId: member.memberId, ...decision });
      expect(res.status, await res.text()).toBe(303);
    }
    const items = await checkedAll(tenant, [partly, denied]);
    expect(items.map((item) => [item.outcome, item.authorization])).toEqual([
      ['status_read', { status: 'partially_approved', number: 'SBX-AUTH-E2E-002', decisionDate: '2026-03-10' }],
      ['status_read', { status: 'denied', number: null, decisionDate: '2026-03-11' }],
    ]);
    expect((await getRequest(tenant, partly)).authorization).toMatchObject({
      status: 'partially_approved',
      number: 'SBX-AUTH-E2E-002',
      decisionDate: '2026-03-10',
    });
    expect((await getRequest(tenant, denied)).authorization).toMatchObject({
      status: 'denied',
      number: null,
      decisionDate: '2026-03-11',
    });
    for (const id of [partly, denied]) {
      const history = await historyOf(tenant, id);
      expect(
        history.body.items.map((item: { current: { status: string } }) => item.current.status),
        id,
      ).toEqual([id === partly ? 'partially_approved' : 'denied', 'pending']);
    }
  }, 180_000);
});
