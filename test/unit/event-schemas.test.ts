import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventData, type EventType, payloadOf } from '#lib/entities/service-event';
import { EVENT_DOCS } from '#lib/events/event-schemas';
import { newEvent } from '#lib/events/events';
import { bodyErrors } from '#test/support/webhook-bodies';

/*
 * The events' JSON Schemas (lib/events/event-schemas.ts) as the built OpenAPI document lists them under
 * `webhooks`: one POST per event type, its payload exact and closed, so a member added or dropped on
 * either side fails, and nothing but ids, codes and statuses fits.
 */
const document = JSON.parse(
  readFileSync(new URL('../../lib/openapi/generated/openapi.json', import.meta.url), 'utf8'),
) as { webhooks: Record<string, any>; components: { schemas: Record<string, unknown> } };

const RUN_ID = '0190c1e4-8a2b-7c3d-9e4f-5a6b7c8d9e0f';
const BATCH_ID = '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5';
const samples: { [T in EventType]: EventData[T] } = {
  'authorization.status_changed': {
    requestExternalId: 'REQ-1',
    previous: { status: 'pending', number: null, decisionDate: null },
    current: { status: 'approved', number: 'AUTH-1', decisionDate: '2026-02-20' },
    runId: RUN_ID,
    items: [],
    reasonCodes: [],
  },
  'authorization.decision_overdue': {
    requestExternalId: 'REQ-1',
    decisionDueAt: '2026-03-08T09:00:00.000Z',
    status: 'pending',
  },
  'authorization.information_requested': {
    requestExternalId: 'REQ-1',
    dueBy: '2026-03-05',
    items: [{ system: 'http://loinc.org', code: '18776-5', sequence: 1 }],
  },
  'automation.run_finished': {
    requestExternalId: 'REQ-1',
    runId: RUN_ID,
    kind: 'check-auth-status',
    outcome: 'status_read',
    batchId: BATCH_ID,
  },
  'automation.batch_finished': { batchId: BATCH_ID, total: 3, counts: { succeeded: 2, failed: 1 } },
  'webhook.test': { webhookId: 'wh_1' },
};
const payload = (type: EventType) =>
  payloadOf(newEvent(type, 'client-1', '2026-03-01T09:00:00.000Z', samples[type] as never)) as Record<string, any>;

describe('the event schemas under the document’s webhooks', () => {
  it('lists one POST per event type, its body the event’s component schema, and no other', () => {
    expect(Object.keys(document.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const body = document.webhooks[type].post.requestBody.content['application/json'].schema;
      expect(body).toEqual({ $ref: `#/components/schemas/${EVENT_DOCS[type].schema}` });
      expect(document.components.schemas[EVENT_DOCS[type].schema]).toBeDefined();
      expect(document.webhooks[type].post.parameters.map((p: { name: string }) => p.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
    }
  });

  for (const type of EVENT_TYPES) {
    it(`${type}: takes the payload the service delivers, and nothing more or less`, () => {
      expect(bodyErrors(type, payload(type))).toEqual([]);
      expect(bodyErrors(type, { ...payload(type), clientId: 'client-1' })).not.toEqual([]);
      const { occurredAt: _, ...withoutTime } = payload(type);
      expect(bodyErrors(type, withoutTime)).not.toEqual([]);
      expect(bodyErrors(type, { ...payload(type), data: { ...payload(type).data, patientName: 'Jane' } })).not.toEqual(
        [],
      );
      const [first] = Object.keys(samples[type]);
      const { [first!]: __, ...short } = payload(type).data;
      expect(bodyErrors(type, { ...payload(type), data: short })).not.toEqual([]);
      expect(bodyErrors(type, { ...payload(type), type: 'something.else' })).not.toEqual([]);
      expect(bodyErrors(type, { ...payload(type), id: 'evt_not-a-uuid' })).not.toEqual([]);
    });
  }

  it('has a webhooks entry for every event type the code emits, and each listed type is emitted somewhere', () => {
    // Every `newEvent('<type>'` of the tracked sources: a type emitted by code and missing from EVENT_TYPES fails tsc,
    // one that no code emits any longer would be a webhook no receiver ever gets.
    const sources = execFileSync('git', ['ls-files', '-z', 'lib', 'functions', 'local'], { encoding: 'utf8' })
      .split('\0')
      .filter((path) => path.endsWith('.ts'));
    const emitted = new Set(
      sources.flatMap((path) =>
        [...readFileSync(path, 'utf8').matchAll(/newEvent(?:<[^>]*>)?\(\s*'([a-z_.]+)'/g)].map((match) => match[1]!),
      ),
    );
    expect([...emitted].sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of emitted) expect(document.webhooks[type], type).toBeDefined();
  });

  it('refuses an unknown status, outcome or kind, and counts that are not whole numbers', () => {
    const changed = payload('authorization.status_changed');
    expect(
      bodyErrors('authorization.status_changed', {
        ...changed,
        data: { ...changed.data, current: { ...changed.data.current, status: 'maybe' } },
      }),
    ).not.toEqual([]);
    const run = payload('automation.run_finished');
    expect(bodyErrors('automation.run_finished', { ...run, data: { ...run.data, outcome: 'oops' } })).not.toEqual([]);
    expect(bodyErrors('automation.run_finished', { ...run, data: { ...run.data, kind: 'other' } })).not.toEqual([]);
    const batch = payload('automation.batch_finished');
    expect(
      bodyErrors('automation.batch_finished', {
        ...batch,
        data: { ...batch.data, counts: { succeeded: 1.5, failed: 0 } },
      }),
    ).not.toEqual([]);
  });
});
