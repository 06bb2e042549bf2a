import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationStatus } from '#lib/entities/request';
import { LIFECYCLE, pairsOf } from '#lib/requests/authorization-lifecycle';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { enableInvocationContexts } from '#local/invocations';
import { PAS_DOCUMENTS_MEMBER_ID, PAS_PARTIAL_MEMBER_ID } from '#local/pas-payer/seed';
import { SANDBOX_MEMBERS } from '#local/sandbox-portal/seed';
import { enforceTableGrants } from '#local/table-grants';
import {
  claimsOf,
  createPasRequest,
  decideAtPayer,
  historyOf,
  ownPayer,
  type PayerApiTenant,
  payerApiTenant,
  setPayerEndpoint,
  submit,
} from '#test/support/payer-api';
import { outboxItemsOf } from './events-support.ts';
import { locationOf, settledBatch, settledRun, startBatch } from './rpa-end-to-end-support.ts';

/*
 * The lifecycle's table (lib/requests/authorization-lifecycle.ts, docs/authorization-lifecycle.md) against what
 * really happens: requests submitted through the API to this file's own local PAS payer (real HTTP, real client
 * assertions), decided by its operator and read again with $inquire. Every history entry they leave is a
 * transition the table lists for the PAS channel and for what made it (the run's kind: a submission or a status
 * read), and every event written with it is one that row says it sends.
 */
let payer: Awaited<ReturnType<typeof ownPayer>>;
const PAYER_ID = 'PTEST-LIFECYCLE';
let tenant: PayerApiTenant;

beforeAll(async () => {
  // First: before any AWS SDK request of this process.
  await enableInvocationContexts();
  enforceTableGrants();
  payer = await ownPayer();
  await setPayerEndpoint(PAYER_ID, payer);
  tenant = await payerApiTenant('pas-lifecycle', { payer, payerId: PAYER_ID });
});
afterAll(() => payer?.close());

const [approvedMember, deniedMember, pendedMember] = SANDBOX_MEMBERS.map((member) => member.memberId);
const TRIGGER_OF_RUN = { submit: 'submission', 'check-auth-status': 'status-read' } as const;

/** Submits the request (its run settled); the Bundle identifier the payer got. */
const submitted = async (externalId: string) => {
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  const run = await settledRun(tenant, locationOf(res));
  expect(run.outcome).toBe('submitted');
  const record = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId });
  return record!.submission!.bundleIdentifier;
};

/** The payer's operator decides the pended claim, then a check-auth-status batch reads it with $inquire. */
const decidedAndRead = async (externalId: string, bundleIdentifier: string, status: 'approved' | 'denied') => {
  const [claim] = await claimsOf(payer, bundleIdentifier);
  await decideAtPayer(payer, { claimId: claim!.claimId, status, number: `PTEST-LC-${Date.now()}` });
  const started = await startBatch(tenant, [externalId]);
  expect(started.status, started.text).toBe(202);
  const batch = await settledBatch(tenant, locationOf(started));
  expect(batch.items[0]).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
};

/** The request's changes, oldest first: from, to, what made them, and the events written with each. */
const turnsOf = async (externalId: string) => {
  const events = (await outboxItemsOf(tenant.clientId))
    .map((item) => item.event as { type: string; occurredAt: string; data: { requestExternalId?: string } })
    .filter((event) => event.data.requestExternalId === externalId && event.type.startsWith('authorization.'));
  const history = (await historyOf(tenant, externalId)).reverse();
  return Promise.all(
    history.map(async (entry) => {
      const { kind } = (await dynamoRunStore.getRun({
        clientId: tenant.clientId,
        externalId,
        runId: entry.changedBy.runId,
      }))!;
      return {
        from: entry.previous.status as AuthorizationStatus,
        to: entry.current.status as AuthorizationStatus,
        by: TRIGGER_OF_RUN[kind as keyof typeof TRIGGER_OF_RUN],
        events: events.filter((event) => event.occurredAt === entry.changedAt).map((event) => event.type),
      };
    }),
  );
};

/** The events the table's rows say a turn sends (no row: the table does not list it). */
const listedEventsOf = (turn: Awaited<ReturnType<typeof turnsOf>>[number]) =>
  LIFECYCLE.filter(
    (row) =>
      row.channels.includes('pas') &&
      row.by.includes(turn.by) &&
      pairsOf(row).some(([from, to]) => from === turn.from && to === turn.to),
  ).map((row) => row.emits);

describe('the lifecycle through the PAS channel, against the local payer', () => {
  it('every change of a submission and a status read is one the table lists, with the events it says', async () => {
    const flows = {
      approved: await createPasRequest(tenant, approvedMember!),
      denied: await createPasRequest(tenant, deniedMember!),
      partial: await createPasRequest(tenant, PAS_PARTIAL_MEMBER_ID),
      pended: await createPasRequest(tenant, pendedMember!),
      documents: await createPasRequest(tenant, PAS_DOCUMENTS_MEMBER_ID),
    };
    for (const externalId of [flows.approved, flows.denied, flows.partial]) await submitted(externalId);
    await decidedAndRead(flows.pended, await submitted(flows.pended), 'denied');
    await decidedAndRead(flows.documents, await submitted(flows.documents), 'approved');

    const seen = new Map<string, Awaited<ReturnType<typeof turnsOf>>>();
    for (const [flow, externalId] of Object.entries(flows)) seen.set(flow, await turnsOf(externalId));
    expect(Object.fromEntries([...seen].map(([flow, turns]) => [flow, turns.map((t) => `${t.from}>${t.to}`)]))).toEqual(
      {
        approved: ['not_submitted>approved'],
        denied: ['not_submitted>denied'],
        partial: ['not_submitted>partially_approved'],
        pended: ['not_submitted>pending', 'pending>denied'],
        documents: ['not_submitted>pending', 'pending>approved'],
      },
    );
    for (const [flow, turns] of seen) {
      for (const turn of turns) {
        const listed = listedEventsOf(turn);
        expect(listed, `${flow}: ${turn.from} > ${turn.to} by ${turn.by}`).not.toEqual([]);
        for (const type of turn.events)
          expect(listed, `${flow}: ${turn.from} > ${turn.to} sent ${type}`).toContain(type);
      }
    }
    // The pended answer that asks for documents sends both events, as the table's rows for it say.
    expect(seen.get('documents')![0]!.events.sort()).toEqual([
      'authorization.information_requested',
      'authorization.status_changed',
    ]);
  });
});
