import { describe, expect, it } from 'vitest';
import { baseUrl, call } from '#test/support/api';
import { loadFailures, runLoad } from '#test/support/load';

/** `npm run load` in short: a few seconds of mixed concurrent traffic from several clients, nothing lost or leaked. */
describe('load without loss (short run)', () => {
  it('stores every acknowledged write as acknowledged, answers no 5xx and shows no client the data of another', async () => {
    const run = await runLoad({ baseUrl, durationMs: 4000, clients: 3, callersPerClient: 3, finalProbesPerPair: 10 });
    const { result } = run;

    expect(loadFailures(result)).toEqual([]);
    expect(result.lostWrites).toEqual([]);
    expect(result.leaks).toEqual([]);
    expect(result.serverErrors).toBe(0);
    // The run did what it claims: every kind of write was acknowledged and then checked.
    expect(result.acknowledged.creates).toBeGreaterThan(0);
    expect(result.acknowledged.patches).toBeGreaterThan(0);
    expect(result.acknowledged.replaces).toBeGreaterThan(0);
    expect(result.acknowledged.uploads).toBeGreaterThan(0);
    expect(result.byOperation.probe['404'] ?? 0).toBeGreaterThan(0);
    expect(result.verified.requests).toBeGreaterThanOrEqual(result.acknowledged.creates);
    expect(result.verified.attachments).toBe(result.acknowledged.uploads);
    expect(result.verified.crossClientProbes).toBeGreaterThan(0);

    // The checks can fail: a write the callers never saw acknowledged, and a deleted upload, are both reported.
    const client = run.clients.find((c) => c.acknowledged.some((r) => r.attachmentIds.length > 0))!;
    const withUpload = client.acknowledged.find((r) => r.attachmentIds.length > 0)!;
    const patched = await call('PATCH', `/api/external/v1/Requests/${withUpload.id}`, {
      apiKey: client.apiKey,
      body: { patient: { memberId: 'changed-behind-the-callers-backs' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patched.status).toBe(200);
    const deleted = await call(
      'DELETE',
      `/api/external/v1.1/Requests/${withUpload.id}/Attachments/${withUpload.attachmentIds[0]}`,
      { apiKey: client.apiKey },
    );
    expect(deleted.status).toBe(204);
    const again = await run.verify();
    expect(again.lostWrites.map((lost) => lost.problem)).toEqual([
      expect.stringContaining('differs from the last acknowledged'),
      expect.stringContaining(`attachment ${withUpload.attachmentIds[0]} not as acknowledged`),
    ]);
    expect(again.leaks).toEqual([]);
  }, 90_000);
});
