import type { RpaBatchRecord, RpaRunRecord } from '#lib/entities/rpa';
import type { ServiceEvent } from '#lib/entities/service-event';
import { newEvent } from '#lib/events/events';

/*
 * What finishing a run or a batch tells the client (docs/events.md): ids, kind, outcome and counts,
 * never what the run typed or read. Written by the finishing write itself (runs.ts: changeRun,
 * closeBatch), so an event is never without its run's end, nor one written for a write that failed.
 */

/** `automation.run_finished` for a run that has just ended with an outcome (none for one that never started). */
export const runFinishedEvents = (run: RpaRunRecord): ServiceEvent[] =>
  run.outcome
    ? [
        newEvent(
          'automation.run_finished',
          run.clientId,
          run.updatedAt,
          {
            requestExternalId: run.externalId,
            runId: run.runId,
            kind: run.kind,
            outcome: run.outcome,
            batchId: run.batchId ?? null,
          },
          // Routing only: an organization-restricted subscription receives its organization's runs alone.
          run.organizationId,
        ),
      ]
    : [];

/** `automation.batch_finished` for a batch that has just closed, counting its runs by how they ended. */
export const batchFinishedEvent = (batch: RpaBatchRecord, runs: readonly Pick<RpaRunRecord, 'status'>[]) =>
  newEvent(
    'automation.batch_finished',
    batch.clientId,
    batch.updatedAt,
    {
      batchId: batch.batchId,
      total: batch.items.length,
      counts: {
        succeeded: runs.filter((run) => run.status === 'succeeded').length,
        failed: runs.filter((run) => run.status === 'failed').length,
      },
    },
    batch.organizationId,
  );
