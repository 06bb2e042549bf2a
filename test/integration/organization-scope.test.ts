import { beforeAll, describe, expect, it } from 'vitest';
import { changedByRun } from '#lib/entities/authorization-history';
import { setAuthorization } from '#lib/requests/authorization-changes';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { call, newTenant, uniqueId } from '#test/support/api';
import { portalAccountReplacementOf } from '#test/support/fixtures';
import { batchPath, newRequest, rpaOf, storedRun } from './rpa-support.ts';

/**
 * API keys restricted to one organization of their client (docs/security.md, "Organizations inside a
 * client"): another organization's portal accounts, client users, runs and batches are 404 to them,
 * as if they did not exist; the client's unrestricted key reaches every organization as before.
 */
const accounts = '/api/external/v1.1/Portals/accounts';
const PASSWORD = 'Portal-Pa55word!';
const TOTP = 'JBSWY3DPEHPK3PXP';

type Tenant = Awaited<ReturnType<typeof newTenant>>;
interface Organization {
  organizationId: string;
  clientUserId: string;
  /** An API key restricted to this organization. */
  apiKey: string;
}

const accountBody = (clientUserId: string, overrides: Record<string, unknown> = {}) => ({
  externalId: uniqueId('pacc'),
  clientUserId,
  portalId: 'sandbox',
  payerIds: ['SBX01'],
  displayName: 'Sandbox',
  username: 'jdoe@clinic.example',
  password: PASSWORD,
  totpSecret: TOTP,
  ...overrides,
});

let t: Tenant;
let a: Organization;
let b: Organization;
/** One account in each organization, created with the client's unrestricted key. */
let accountA: Record<string, any>;
let accountB: Record<string, any>;

const restrictedTo = async (organizationId: string, clientUserId: string): Promise<Organization> => {
  const { apiKey } = await t.admin.createApiKey(t.clientId, undefined, { organizationId });
  return { organizationId, clientUserId, apiKey };
};

const createAccount = async (apiKey: string, clientUserId: string) => {
  const res = await call('POST', accounts, { apiKey, body: accountBody(clientUserId) });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
};

beforeAll(async () => {
  t = await newTenant('org-scope');
  const { organizationId: orgB } = await t.admin.createOrganization(t.clientId, 'Org B');
  const userB = `user-b-${uniqueId()}`;
  await t.admin.createClientUser(t.clientId, orgB, userB);
  a = await restrictedTo(t.organizationId, t.clientUserId);
  b = await restrictedTo(orgB, userB);
  accountA = await createAccount(t.apiKey, a.clientUserId);
  accountB = await createAccount(t.apiKey, b.clientUserId);
});

/** The account as the unrestricted key reads it: to show that a refused write changed nothing. */
const unrestrictedView = async (externalId: string) => {
  const res = await call('GET', `${accounts}/${externalId}`, { apiKey: t.apiKey });
  expect(res.status, res.text).toBe(200);
  return res.body;
};

describe('portal accounts under an organization-restricted key', () => {
  it('reads, lists and filters its own organization’s accounts (200)', async () => {
    const own = await call('GET', `${accounts}/${accountA.externalId}`, { apiKey: a.apiKey });
    expect(own.status, own.text).toBe(200);
    expect(own.body).toMatchObject({ externalId: accountA.externalId, organizationId: a.organizationId });
    const list = await call('GET', `${accounts}/${a.clientUserId}/list`, { apiKey: a.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.items.map((x: any) => x.externalId)).toEqual([accountA.externalId]);
    const filter = await call('POST', `${accounts}/filter`, {
      apiKey: a.apiKey,
      body: { clientUserId: a.clientUserId, portalId: 'sandbox' },
    });
    expect(filter.status).toBe(200);
    expect(filter.body.items.map((x: any) => x.externalId)).toEqual([accountA.externalId]);
  });

  it('gets 404 for another organization’s account on GET, PUT, DELETE, list and filter; nothing changes', async () => {
    const url = `${accounts}/${accountB.externalId}`;
    const as = { apiKey: a.apiKey };
    const get = await call('GET', url, as);
    expect(get.status).toBe(404);
    expect(get.text).not.toContain(accountB.username);
    const put = await call('PUT', url, {
      ...as,
      body: portalAccountReplacementOf(accountB, { displayName: 'Taken over', password: 'pw', totpSecret: null }),
    });
    expect(put.status).toBe(404);
    // Naming its own user does not help: the account is still another organization's.
    const putOwnUser = await call('PUT', url, {
      ...as,
      body: portalAccountReplacementOf(accountB, { clientUserId: a.clientUserId, password: 'pw', totpSecret: null }),
    });
    expect(putOwnUser.status).toBe(404);
    expect((await call('DELETE', url, as)).status).toBe(404);
    expect((await call('GET', `${accounts}/${b.clientUserId}/list`, as)).status).toBe(404);
    expect((await call('POST', `${accounts}/filter`, { ...as, body: { clientUserId: b.clientUserId } })).status).toBe(
      404,
    );
    expect(await unrestrictedView(accountB.externalId)).toEqual(accountB);
    // And the other way round.
    expect((await call('GET', `${accounts}/${accountA.externalId}`, { apiKey: b.apiKey })).status).toBe(404);
  });

  it('PUT naming another organization’s client user is a 404, not a move: nothing changes', async () => {
    const account = await createAccount(a.apiKey, a.clientUserId);
    const res = await call('PUT', `${accounts}/${account.externalId}`, {
      apiKey: a.apiKey,
      body: portalAccountReplacementOf(account, { clientUserId: b.clientUserId, password: 'pw', totpSecret: null }),
    });
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain(b.clientUserId);
    expect(await unrestrictedView(account.externalId)).toEqual(account);
  });

  it('creates only in its own organization; deletes its own', async () => {
    const refused = await call('POST', accounts, { apiKey: a.apiKey, body: accountBody(b.clientUserId) });
    expect(refused.status).toBe(404);
    const created = await createAccount(a.apiKey, a.clientUserId);
    expect(created.organizationId).toBe(a.organizationId);
    const url = `${accounts}/${created.externalId}`;
    expect((await call('DELETE', url, { apiKey: a.apiKey })).status).toBe(204);
    expect((await call('GET', url, { apiKey: t.apiKey })).status).toBe(404);
  });

  it('does not replay what another key of the client created under the same Idempotency-Key', async () => {
    const body = accountBody(b.clientUserId);
    const headers = { 'idempotency-key': uniqueId('idem') };
    const first = await call('POST', accounts, { apiKey: t.apiKey, body, headers });
    expect(first.status, first.text).toBe(201);
    const replayed = await call('POST', accounts, { apiKey: a.apiKey, body, headers });
    expect(replayed.status).toBe(404);
    expect(replayed.text).not.toContain(body.externalId);
  });
});

describe('an unrestricted key behaves as before', () => {
  it('reaches every organization, and moves an account between them with its secrets again', async () => {
    for (const account of [accountA, accountB]) {
      expect((await call('GET', `${accounts}/${account.externalId}`, { apiKey: t.apiKey })).status).toBe(200);
    }
    const list = await call('GET', `${accounts}/${b.clientUserId}/list`, { apiKey: t.apiKey });
    expect(list.body.items.map((x: any) => x.externalId)).toContain(accountB.externalId);
    const account = await createAccount(t.apiKey, a.clientUserId);
    const moved = await call('PUT', `${accounts}/${account.externalId}`, {
      apiKey: t.apiKey,
      body: portalAccountReplacementOf(account, { clientUserId: b.clientUserId, password: 'pw', totpSecret: null }),
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.organizationId).toBe(b.organizationId);
    // Now it is organization B's: B's key reaches it, A's no longer does.
    expect((await call('GET', `${accounts}/${account.externalId}`, { apiKey: b.apiKey })).status).toBe(200);
    expect((await call('GET', `${accounts}/${account.externalId}`, { apiKey: a.apiKey })).status).toBe(404);
  });
});

describe('the automation under an organization-restricted key', () => {
  it('issues a scraper token only for its own organization’s client users', async () => {
    // Requests belong to the client: the restricted key creates and reads them.
    const externalId = await newRequest(a.apiKey);
    const other = await call('POST', rpaOf(externalId), { apiKey: a.apiKey, body: { clientUserId: b.clientUserId } });
    expect(other.status).toBe(404);
    expect(other.text).not.toContain('accessToken');
    const own = await call('POST', rpaOf(externalId), { apiKey: a.apiKey, body: { clientUserId: a.clientUserId } });
    expect(own.status, own.text).toBe(200);
    expect(own.body.accessToken).toEqual(expect.any(String));
  });

  it('starts nothing for another organization’s client user (view-on-page, batch): 404', async () => {
    const externalId = await newRequest(a.apiKey);
    const view = await call('POST', `${rpaOf(externalId)}/view-on-page`, {
      apiKey: a.apiKey,
      body: { clientUserId: b.clientUserId },
    });
    expect(view.status).toBe(404);
    const batch = await call('POST', batchPath, {
      apiKey: a.apiKey,
      body: { clientUserId: b.clientUserId, requestExternalIds: [externalId] },
    });
    expect(batch.status).toBe(404);
  });

  it('a scraper session opened by its token shows only its organization’s runs, and the request’s whole history without other organizations’ run ids', async () => {
    // Requests belong to the client, runs to the organization of the user they ran for.
    const externalId = await newRequest(t.apiKey);
    const runA = await storedRun(
      { clientId: t.clientId, organizationId: a.organizationId, clientUserId: a.clientUserId },
      externalId,
    );
    const runB = await storedRun(
      { clientId: t.clientId, organizationId: b.organizationId, clientUserId: b.clientUserId },
      externalId,
    );
    // Each organization's run read a change of the request's authorization.
    const pending = { status: 'pending', number: null, decisionDate: null, lastCheckedAt: runA.createdAt } as const;
    const ref = { clientId: t.clientId, externalId };
    await setAuthorization(dynamoRequestStore, ref, pending, changedByRun(runA), runA.createdAt);
    const at = new Date(Date.parse(runA.createdAt) + 1000).toISOString();
    const denied = { status: 'denied', number: null, decisionDate: '2026-03-01', lastCheckedAt: at } as const;
    await setAuthorization(dynamoRequestStore, ref, denied, changedByRun(runB), at);
    const sessionOf = async (apiKey: string) => {
      const token = await call('POST', rpaOf(externalId), { apiKey, body: { clientUserId: a.clientUserId } });
      expect(token.status, token.text).toBe(200);
      const res = await call('GET', `${rpaOf(externalId)}/session`, {
        headers: { authorization: `Bearer ${token.body.accessToken}`, accept: 'application/json' },
      });
      expect(res.status, res.text).toBe(200);
      return {
        runs: res.body.runs.map((run: { runId: string }) => run.runId).sort(),
        history: res.body.authorizationHistory.map((entry: { changedBy: { runId: string } }) => entry.changedBy.runId),
        page: res.text,
      };
    };
    const restricted = await sessionOf(a.apiKey);
    expect({ runs: restricted.runs, history: restricted.history }).toEqual({
      runs: [runA.runId],
      history: [null, runA.runId],
    });
    expect(restricted.page).not.toContain(runB.runId);
    const { page: _page, ...unrestricted } = await sessionOf(t.apiKey);
    expect(unrestricted).toEqual({
      runs: [runA.runId, runB.runId].sort(),
      history: [runB.runId, runA.runId],
    });
  });

  it('an organization-restricted key reads the request’s history without the ids of other organizations’ runs', async () => {
    const externalId = await newRequest(t.apiKey);
    const [runA, runB] = await Promise.all(
      [a, b].map((org) =>
        storedRun(
          { clientId: t.clientId, organizationId: org.organizationId, clientUserId: org.clientUserId },
          externalId,
        ),
      ),
    );
    const ref = { clientId: t.clientId, externalId };
    const base = Date.parse(runA!.createdAt);
    const at = (seconds: number) => new Date(base + seconds * 1000).toISOString();
    const state = (status: 'pending' | 'denied' | 'approved', seconds: number) =>
      ({ status, number: null, decisionDate: null, lastCheckedAt: at(seconds) }) as const;
    await setAuthorization(dynamoRequestStore, ref, state('pending', 1), changedByRun(runA!), at(1));
    await setAuthorization(dynamoRequestStore, ref, state('denied', 2), changedByRun(runB!), at(2));
    // An entry written before runs carried their organization: only unrestricted keys see its run.
    await setAuthorization(dynamoRequestStore, ref, state('approved', 3), { kind: 'run', runId: runA!.runId }, at(3));
    const historyOf = async (apiKey: string) => {
      const res = await call('GET', `/api/external/v1.1/Requests/${externalId}/authorization/history`, { apiKey });
      expect(res.status, res.text).toBe(200);
      expect(res.text).not.toContain('organizationId');
      return res.body.items.map((entry: { changedBy: { kind: string; runId: string | null } }) => entry.changedBy);
    };
    const run = (runId: string | null) => ({ kind: 'run', runId });
    expect(await historyOf(a.apiKey)).toEqual([run(null), run(null), run(runA!.runId)]);
    expect(await historyOf(b.apiKey)).toEqual([run(null), run(runB!.runId), run(null)]);
    expect(await historyOf(t.apiKey)).toEqual([run(runA!.runId), run(runB!.runId), run(runA!.runId)]);
  });

  it('reads its own organization’s runs, and gets 404 for another’s', async () => {
    const externalId = await newRequest(t.apiKey);
    const run = await storedRun(
      { clientId: t.clientId, organizationId: b.organizationId, clientUserId: b.clientUserId },
      externalId,
    );
    const path = `${rpaOf(externalId)}/runs/${run.runId}`;
    expect((await call('GET', path, { apiKey: b.apiKey })).status).toBe(200);
    expect((await call('GET', path, { apiKey: t.apiKey })).status).toBe(200);
    expect((await call('GET', path, { apiKey: a.apiKey })).status).toBe(404);
  });
});
