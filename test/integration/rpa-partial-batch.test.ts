import { describe, expect, it } from 'vitest';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { SANDBOX_DEMO_MEMBERS, SANDBOX_MEMBERS, SANDBOX_PAYER_ID, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { call } from '#test/support/api';
import {
  automationTenant,
  createPortalAccount,
  createRequest,
  locationOf,
  settledBatch,
  type Tenant,
} from './rpa-end-to-end-support.ts';
import { batchPath } from './rpa-support.ts';

/*
 * A check-auth-status batch with `partial: true` (docs/rpa.md) over HTTP on the shared local stack: the
 * requests that can be started are, and the others come back in the 202 with their reason; a batch none
 * of whose requests can start is refused as without the flag, and without it one refusal refuses all.
 * Every answer is checked against the served OpenAPI document by `call`.
 */
const memberOf = (memberId: string) => SANDBOX_MEMBERS.find((member) => member.memberId === memberId)!;

/**
 * A tenant with two active accounts, so a request that names no payer cannot be automated: DEMO-APPROVED
 * (its payer served by sandbox-front-desk) can, NO-PAYER cannot.
 */
const mixedTenant = async (label: string) => {
  const tenant = await automationTenant(label);
  await createPortalAccount(tenant, {
    externalId: 'sandbox-other-payer',
    payerIds: ['ANOTHER-PAYER'],
    username: SANDBOX_USERS[1]!.username,
    password: SANDBOX_USERS[1]!.password,
    totpSecret: SANDBOX_USERS[1]!.totpSecret,
  });
  await createRequest(tenant, 'DEMO-APPROVED', memberOf(SANDBOX_DEMO_MEMBERS['DEMO-APPROVED']), SANDBOX_PAYER_ID);
  await createRequest(tenant, 'NO-PAYER', memberOf(SANDBOX_DEMO_MEMBERS['DEMO-PENDED']), null);
  return tenant;
};

const post = (tenant: Tenant, requestExternalIds: string[], more: Record<string, unknown> = {}) =>
  call('POST', batchPath, {
    apiKey: tenant.apiKey,
    body: { clientUserId: tenant.clientUserId, requestExternalIds, ...more },
  });

const runsOf = (tenant: Tenant, externalId: string) => dynamoRunStore.latestRuns(tenant.clientId, externalId, 10);

describe('a check-auth-status batch with partial: true', () => {
  it('starts the requests that can be started and answers the others with their reason, in the order sent', async () => {
    const tenant = await mixedTenant('rpa-partial-mixed');
    const res = await post(tenant, ['NO-PAYER', 'DEMO-APPROVED', 'NOPE-1'], { partial: true });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({
      batchId: expect.any(String),
      executionId: expect.any(String),
      total: 1,
      requests: [
        { requestExternalId: 'NO-PAYER', reason: 'no_payer_and_several_accounts' },
        { requestExternalId: 'NOPE-1', reason: 'request_not_found' },
      ],
    });
    const batch = await settledBatch(tenant, locationOf(res));
    expect(batch.items.map((item: { requestExternalId: string }) => item.requestExternalId)).toEqual(['DEMO-APPROVED']);
    expect(batch.items[0]).toMatchObject({ outcome: 'status_read', authorization: { status: 'approved' } });
    expect(await runsOf(tenant, 'NO-PAYER')).toEqual([]);

    // All started: an empty list, so a client reads `requests` the same way every time.
    const all = await post(tenant, ['DEMO-APPROVED'], { partial: true });
    expect(all.status, all.text).toBe(202);
    expect(all.body).toMatchObject({ total: 1, requests: [] });
    await settledBatch(tenant, locationOf(all));
  });

  it('is refused as without it when no request can be started: 422 naming them, or 404 for unknown ones', async () => {
    const tenant = await mixedTenant('rpa-partial-none');
    const none = await post(tenant, ['NO-PAYER'], { partial: true });
    expect(none.status, none.text).toBe(422);
    expect(none.body).toMatchObject({
      status: 422,
      requests: [{ requestExternalId: 'NO-PAYER', reason: 'no_payer_and_several_accounts' }],
    });
    const unknown = await post(tenant, ['NO-PAYER', 'NOPE-1'], { partial: true });
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.body).toMatchObject({ status: 404, requestExternalIds: ['NOPE-1'] });
    expect(await runsOf(tenant, 'NO-PAYER')).toEqual([]);
  });

  it('is all or nothing without it (absent or false): one request that cannot start refuses the batch', async () => {
    const tenant = await mixedTenant('rpa-partial-absent');
    for (const more of [{}, { partial: false }]) {
      const res = await post(tenant, ['DEMO-APPROVED', 'NO-PAYER'], more);
      expect(res.status, res.text).toBe(422);
      expect(res.body).toMatchObject({
        requests: [{ requestExternalId: 'NO-PAYER', reason: 'no_payer_and_several_accounts' }],
      });
      expect(res.body.detail).toMatch(/No check was started\.$/);
    }
    expect(await runsOf(tenant, 'DEMO-APPROVED')).toEqual([]);
  });
});
