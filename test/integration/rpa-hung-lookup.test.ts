import { beforeAll, describe, expect, it } from 'vitest';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { SANDBOX_HANG_MEMBER_ID, SANDBOX_MEMBERS, SANDBOX_PAYER_ID } from '#local/sandbox-portal/seed';
import { uniqueId } from '#test/support/api';
import { createPasRequest, payerApiTenant, setPayerEndpoint, stackPayer } from '#test/support/payer-api';
import {
  automationTenant,
  createRequest,
  locationOf,
  settledBatch,
  startBatch,
  taskTimeoutSeconds,
} from './rpa-end-to-end-support.ts';

/*
 * A group of a check-auth-status batch in which one lookup never gets an answer: the sandbox portal (in
 * real Chromium) or the local PAS payer (over HTTP) holds its request for the hang member (SBX-99999)
 * forever. That lookup ends on its own deadline, alone: the lookups after it in the group go on and read
 * their statuses (docs/rpa.md, "A hung lookup"). The test stack's Tasks have 25 s, so on the portal the
 * lookup after the hang is its group's next invocation; that the same session goes on after a hang, on a
 * fresh page: sandbox-driver.test.ts (the driver) and rpa-worker.test.ts (the worker's deadlines).
 */
const memberOf = (memberId: string) => SANDBOX_MEMBERS.find((member) => member.memberId === memberId)!;
const outcomesOf = (batch: { items: Array<{ requestExternalId: string; status: string; outcome: string }> }) =>
  Object.fromEntries(batch.items.map((item) => [item.requestExternalId, [item.status, item.outcome]]));

describe('a hung lookup costs one request, not its group', () => {
  it('on the portal: the lookup that hangs ends portal_timeout; the one after it in the group reads its status', async () => {
    const tenant = await automationTenant('hung-portal');
    // One account, so one group in one session: the hang is the middle lookup.
    const approved = await createRequest(tenant, 'DEMO-APPROVED', memberOf('SBX-10001'), SANDBOX_PAYER_ID);
    const hung = await createRequest(tenant, uniqueId('HUNG'), memberOf(SANDBOX_HANG_MEMBER_ID), SANDBOX_PAYER_ID);
    const after = await createRequest(tenant, uniqueId('AFTER'), memberOf('SBX-10002'), SANDBOX_PAYER_ID);

    const started = await startBatch(tenant, [approved, hung, after]);
    expect(started.status, started.text).toBe(202);
    const batch = await settledBatch(tenant, locationOf(started), (4 * taskTimeoutSeconds + 30) * 1000);

    expect(outcomesOf(batch)).toEqual({
      [approved]: ['succeeded', 'status_read'],
      [hung]: ['failed', 'portal_timeout'],
      [after]: ['succeeded', 'not_found_on_portal'],
    });
    // The hung one was tried once: no retry of the group for it.
    const hungItem = batch.items.find((item: { requestExternalId: string }) => item.requestExternalId === hung);
    const run = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId: hung, runId: hungItem.runId });
    expect(run!.steps.filter((step) => step.step === 'started')).toHaveLength(1);
  }, 180_000);

  describe('on the payer API', () => {
    const payer = stackPayer();
    const PAYER_ID = 'PTEST-HUNG';
    beforeAll(async () => {
      await setPayerEndpoint(PAYER_ID, payer);
    });

    it('the inquiry that hangs ends payer_unavailable after its 15 s; the ones after it are read at once', async () => {
      const tenant = await payerApiTenant('hung-payer', { payer, payerId: PAYER_ID });
      const first = await createPasRequest(tenant, 'SBX-10001');
      const hung = await createPasRequest(tenant, SANDBOX_HANG_MEMBER_ID);
      const after = await createPasRequest(tenant, 'SBX-10002');

      const begun = Date.now();
      const started = await startBatch(tenant, [first, hung, after]);
      expect(started.status, started.text).toBe(202);
      const batch = await settledBatch(tenant, locationOf(started));

      // Never submitted, so the payer knows none of them: each read says so, but the hung one.
      expect(outcomesOf(batch)).toEqual({
        [first]: ['succeeded', 'not_found_at_payer'],
        [hung]: ['failed', 'payer_unavailable'],
        [after]: ['succeeded', 'not_found_at_payer'],
      });
      // One wait of PAS's 15 s, not the back-off's retries of the hung one with the rest waiting behind it.
      expect(Date.now() - begun).toBeLessThan(40_000);
      const hungItem = batch.items.find((item: { requestExternalId: string }) => item.requestExternalId === hung);
      const run = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId: hung, runId: hungItem.runId });
      expect(run!.payerAttempts).toBe(1);
    }, 180_000);
  });
});
