import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { VersionConflict } from '#lib/concurrency';
import type { SealedSecret } from '#lib/crypto/sealed-secret';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import type { RpaRunRecord, RunKind } from '#lib/entities/rpa';
import { log } from '#lib/observability/logger';
import type { RunCredentialsRequest } from '#lib/portal/credentials-source';
import {
  CREDENTIALS_ISSUED_STEP,
  type RunCredentialsDependencies,
  runCredentialsIssuer,
} from '#lib/portal/run-credentials';
import type { PortalCredentials } from '#lib/portal-accounts/credentials';
import type { AutomationMachine, ExecutionStatus } from '#lib/runs/automation-starter';
import { CredentialsRefused, type RefusalReason } from '#lib/runs/errors';
import type { RunRef } from '#lib/runs/run-store';

/*
 * The run credentials function's checks (lib/portal/run-credentials.ts) on in-memory ports: every refusal
 * by name, with nothing opened and nothing written, and the one issue per attempt, recorded on the run
 * by a conditional write before anything is opened. test/integration/rpa-run-credentials.test.ts asks
 * the real function, on the local stack, as the workers do.
 */

const NOW = new Date('2026-03-02T10:00:00.000Z');
const EARLIER = '2026-03-02T09:59:00.000Z';

const account: StoredPortalAccount = {
  clientId: 'client-1',
  organizationId: 'org-1',
  externalId: 'account-1',
  clientUserId: 'user-1',
  portalId: 'sandbox',
  payerIds: ['PAYER-1'],
  displayName: 'Front desk',
  username: 'desk@clinic.example',
  status: 'active',
  lastLogin: null,
  attention: null,
  password: { v: 2, keyring: 'local', message: 'sealed' } as SealedSecret,
  passwordChangedAt: EARLIER,
  totpSecret: null,
  totpSecretChangedAt: null,
  version: 1,
  createdAt: EARLIER,
  updatedAt: EARLIER,
};

const runOf = (kind: RunKind, change: Partial<RpaRunRecord> = {}): RpaRunRecord => ({
  clientId: 'client-1',
  externalId: 'REQ-1',
  runId: 'run-1',
  kind,
  ...(kind === 'check-auth-status' ? { batchId: 'batch-1' } : {}),
  clientUserId: 'user-1',
  organizationId: 'org-1',
  portalAccountId: 'account-1',
  portalId: 'sandbox',
  status: 'running',
  steps: [
    { at: EARLIER, step: 'queued' },
    { at: EARLIER, step: 'started' },
  ],
  enteredValues: {},
  screenshots: [],
  version: 4,
  createdAt: EARLIER,
  updatedAt: EARLIER,
  ...change,
});

/** The input the API starts a run's execution with (lib/runs/runs.ts): a view-on-page run's own, or its batch's. */
const executionInputOf = (run: RpaRunRecord): Record<string, unknown> =>
  run.kind === 'view-on-page'
    ? {
        clientId: run.clientId,
        requestExternalId: run.externalId,
        runId: run.runId,
        portalAccountId: run.portalAccountId,
      }
    : {
        clientId: run.clientId,
        batchId: run.batchId,
        groups: [
          { portalAccountId: 'account-2', items: [{ requestExternalId: run.externalId, runId: run.runId }] },
          {
            portalAccountId: run.portalAccountId,
            items: [
              { requestExternalId: 'REQ-0', runId: 'run-0' },
              { requestExternalId: run.externalId, runId: run.runId },
            ],
          },
        ],
      };

const requestFor = (run: RpaRunRecord, change: Partial<RunCredentialsRequest> = {}): RunCredentialsRequest => ({
  clientId: run.clientId,
  requestExternalId: run.externalId,
  runId: run.runId,
  portalAccountId: run.portalAccountId!,
  attempt: 1,
  ...change,
});

interface World {
  run?: RpaRunRecord;
  account?: StoredPortalAccount;
  /** What the execution reader finds by machine and name; by default the run's execution, running. */
  executions?: Record<string, { status: ExecutionStatus; input: string }>;
  credentials?: PortalCredentials;
  /** Runs a reader sees after the first (another writer got there in between), or undefined: gone. */
  later?: Array<RpaRunRecord | undefined>;
  withoutClock?: boolean;
}

/** The issuer on in-memory ports, and what happened to them. */
const worldOf = ({
  run = runOf('view-on-page'),
  account: stored = account,
  executions,
  credentials = { username: 'desk@clinic.example', password: 'pw-1', totpSecret: null },
  later = [],
  withoutClock = false,
}: World = {}) => {
  let current: RpaRunRecord | undefined = structuredClone(run);
  const reads: RunRef[] = [];
  const writes: RpaRunRecord[] = [];
  const opened: StoredPortalAccount[] = [];
  const asked: Array<[AutomationMachine, string]> = [];
  const name = run.kind === 'view-on-page' ? run.runId : run.batchId;
  const found = executions ?? {
    [`${run.kind} ${name}`]: { status: 'RUNNING', input: JSON.stringify(executionInputOf(run)) },
  };
  const pending = [...later];
  const deps: RunCredentialsDependencies = {
    runs: {
      getRun: async (ref) => {
        reads.push(ref);
        if (reads.length > 1 && pending.length) current = structuredClone(pending.shift());
        const same =
          current &&
          ref.clientId === current.clientId &&
          ref.externalId === current.externalId &&
          ref.runId === current.runId;
        return same ? structuredClone(current) : undefined;
      },
      updateRun: async (next) => {
        if (!current || next.version !== current.version + 1) throw new VersionConflict();
        writes.push(structuredClone(next));
        current = structuredClone(next);
      },
    },
    accounts: {
      get: async (clientId, externalId) =>
        clientId === stored.clientId && externalId === stored.externalId ? structuredClone(stored) : undefined,
    },
    executions: {
      read: async (machine, executionName) => {
        asked.push([machine, executionName]);
        return found[`${machine} ${executionName}`];
      },
    },
    open: async (opening) => {
      opened.push(opening);
      return credentials;
    },
    ...(withoutClock ? {} : { now: () => NOW }),
  };
  return { issuer: runCredentialsIssuer(deps), writes, opened, asked, reads, stored: () => current };
};

let warn: MockInstance<typeof log.warn>;
let info: MockInstance<typeof log.info>;
beforeEach(() => {
  warn = vi.spyOn(log, 'warn').mockImplementation(() => undefined);
  info = vi.spyOn(log, 'info').mockImplementation(() => undefined);
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The reason `issue` refused with; fails on anything else. */
const refusalOf = async (issuing: Promise<unknown>): Promise<RefusalReason> => {
  const error = await issuing.then(
    () => expect.unreachable('issued'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CredentialsRefused);
  return (error as CredentialsRefused).reason;
};

/** Refused with `reason`: logged once by its code, nothing opened, nothing written. */
const expectRefused = async (world: ReturnType<typeof worldOf>, input: unknown, reason: RefusalReason) => {
  warn.mockClear();
  info.mockClear();
  expect(await refusalOf(world.issuer.issue(input))).toBe(reason);
  const runId = (input as { runId?: unknown } | null)?.runId;
  expect(warn.mock.calls).toEqual([
    ['Run credentials refused', { runId: reason === 'invalid_input' ? undefined : runId, reason }],
  ]);
  expect(info).not.toHaveBeenCalled();
  expect(world.opened).toEqual([]);
  expect(world.writes).toEqual([]);
};

describe('the run credentials function', () => {
  describe.each(['view-on-page', 'check-auth-status'] as const)('for a live %s run', (kind) => {
    it("issues the account's credentials for the current attempt, recorded on the run first", async () => {
      const run = runOf(kind);
      const world = worldOf({ run });
      expect(await world.issuer.issue(requestFor(run))).toEqual({ username: 'desk@clinic.example', password: 'pw-1' });
      expect(world.asked).toEqual([[kind, kind === 'view-on-page' ? 'run-1' : 'batch-1']]);
      expect(world.opened).toEqual([account]);
      expect(world.writes).toEqual([
        {
          ...run,
          steps: [...run.steps, { at: NOW.toISOString(), step: 'credentials issued', detail: 'attempt 1' }],
          version: 5,
          updatedAt: NOW.toISOString(),
        },
      ]);
      expect(info.mock.calls).toEqual([
        ['Run credentials issued', { runId: 'run-1', attempt: 1, portalAccountId: 'account-1' }],
      ]);
      expect(warn).not.toHaveBeenCalled();
    });
  });

  it('issues for the n-th attempt once the run has started n times, and the TOTP secret when there is one', async () => {
    const run = runOf('view-on-page', {
      steps: [
        ...runOf('view-on-page').steps,
        { at: EARLIER, step: CREDENTIALS_ISSUED_STEP, detail: 'attempt 1' },
        { at: EARLIER, step: 'started' },
      ],
    });
    const world = worldOf({
      run,
      credentials: { username: 'desk@clinic.example', password: 'pw-1', totpSecret: 'JBSWY3DPEHPK3PXP' },
    });
    expect(await world.issuer.issue(requestFor(run, { attempt: 2 }))).toEqual({
      username: 'desk@clinic.example',
      password: 'pw-1',
      totpSecret: 'JBSWY3DPEHPK3PXP',
    });
    expect(world.stored()?.steps.at(-1)).toEqual({
      at: NOW.toISOString(),
      step: 'credentials issued',
      detail: 'attempt 2',
    });
  });

  it('answers nothing of the credentials but the username, the password and a TOTP secret', async () => {
    const world = worldOf({
      credentials: { username: 'u', password: 'p', totpSecret: '', extra: 'x' } as PortalCredentials,
    });
    expect(await world.issuer.issue(requestFor(runOf('view-on-page')))).toEqual({ username: 'u', password: 'p' });
  });

  it('stamps the issue with the time it was recorded, by default the clock', async () => {
    const world = worldOf({ withoutClock: true });
    const before = Date.now();
    await world.issuer.issue(requestFor(runOf('view-on-page')));
    const at = Date.parse(world.writes[0]!.steps.at(-1)!.at);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
    expect(world.writes[0]!.updatedAt).toBe(world.writes[0]!.steps.at(-1)!.at);
  });

  it('refuses a second ask for the same attempt: already issued', async () => {
    const run = runOf('view-on-page');
    const world = worldOf({ run });
    await world.issuer.issue(requestFor(run));
    world.opened.length = 0;
    world.writes.length = 0;
    await expectRefused(world, requestFor(run), 'already_issued');
  });

  describe('refuses input that is not the worker’s', () => {
    const run = runOf('view-on-page');
    const valid = requestFor(run);

    it.each([
      ['nothing', undefined],
      ['null', null],
      ['a string', JSON.stringify(valid)],
      ['an array', [valid]],
      ['no client', { ...valid, clientId: undefined }],
      ['an empty request id', { ...valid, requestExternalId: '' }],
      ['a numeric run id', { ...valid, runId: 1 }],
      ['no portal account', { ...valid, portalAccountId: undefined }],
      ['an id of 257 characters', { ...valid, portalAccountId: 'a'.repeat(257) }],
      ['no attempt', { ...valid, attempt: undefined }],
      ['an attempt as text', { ...valid, attempt: '1' }],
      ['attempt 0', { ...valid, attempt: 0 }],
      ['attempt 1.5', { ...valid, attempt: 1.5 }],
      ['attempt 1001', { ...valid, attempt: 1001 }],
      ['an unsafe attempt', { ...valid, attempt: 2 ** 53 }],
      ['an infinite attempt', { ...valid, attempt: Number.POSITIVE_INFINITY }],
    ])('%s: invalid_input', async (_, input) => {
      const world = worldOf({ run });
      await expectRefused(world, input, 'invalid_input');
      expect(world.reads).toEqual([]);
    });

    it('but reads ids of 256 characters and attempt 1000 as a request, to refuse them by what they name', async () => {
      await expectRefused(worldOf({ run }), { ...valid, runId: 'r'.repeat(256) }, 'run_not_found');
      await expectRefused(worldOf({ run }), { ...valid, attempt: 1000 }, 'not_current_attempt');
    });
  });

  it('reads the run the request names, of its client and request', async () => {
    const run = runOf('view-on-page');
    for (const other of [{ clientId: 'client-2' }, { requestExternalId: 'REQ-2' }, { runId: 'run-2' }]) {
      await expectRefused(worldOf({ run }), requestFor(run, other), 'run_not_found');
    }
  });

  it.each([
    ['a run of another kind', { kind: 'submit-form' as RunKind }, 'not_a_browser_run'],
    ['a run that succeeded', { status: 'succeeded' }, 'run_ended'],
    ['a run that failed', { status: 'failed' }, 'run_ended'],
    ['a run on no account', { portalAccountId: undefined }, 'other_account'],
    ['a run on another account', { portalAccountId: 'account-2' }, 'other_account'],
    ['a run of another organization than the account', { organizationId: 'org-2' }, 'other_account'],
    ['a run on another portal than the account', { portalId: 'other-portal' }, 'other_account'],
    [
      'a run that has not started yet',
      { status: 'queued', steps: [{ at: EARLIER, step: 'queued' }] },
      'not_current_attempt',
    ],
  ] as Array<[string, Partial<RpaRunRecord>, RefusalReason]>)('refuses %s: %s', async (_, change, reason) => {
    const run = runOf('view-on-page', change);
    // The execution is the original run's, running: only the run's own state refuses.
    const executions = {
      'view-on-page run-1': {
        status: 'RUNNING' as const,
        input: JSON.stringify(executionInputOf(runOf('view-on-page'))),
      },
    };
    await expectRefused(worldOf({ run, executions }), requestFor(runOf('view-on-page')), reason);
  });

  it('refuses an account that is missing, disabled, or of another client', async () => {
    const run = runOf('view-on-page');
    await expectRefused(
      worldOf({ run, account: { ...account, externalId: 'account-9' } }),
      requestFor(run),
      'other_account',
    );
    await expectRefused(
      worldOf({ run, account: { ...account, clientId: 'client-2' } }),
      requestFor(run),
      'other_account',
    );
    await expectRefused(
      worldOf({ run, account: { ...account, status: 'disabled' } }),
      requestFor(run),
      'account_unusable',
    );
  });

  it('refuses an attempt that is not the current one', async () => {
    const run = runOf('view-on-page', {
      steps: [...runOf('view-on-page').steps, { at: EARLIER, step: 'started' }],
    });
    await expectRefused(worldOf({ run }), requestFor(run, { attempt: 1 }), 'not_current_attempt');
    await expectRefused(worldOf({ run }), requestFor(run, { attempt: 3 }), 'not_current_attempt');
  });

  it('counts an issue for another attempt, or another step, as no issue for this one', async () => {
    const run = runOf('view-on-page', {
      steps: [
        ...runOf('view-on-page').steps,
        { at: EARLIER, step: CREDENTIALS_ISSUED_STEP, detail: 'attempt 2' },
        { at: EARLIER, step: 'login', detail: 'attempt 1' },
      ],
    });
    expect(await worldOf({ run }).issuer.issue(requestFor(run))).toMatchObject({ password: 'pw-1' });
  });

  describe('refuses a run no running execution of the API names, on its account: no_live_execution', () => {
    const viewRun = runOf('view-on-page');
    const batchRun = runOf('check-auth-status');
    const inputOf = (run: RpaRunRecord, change: Record<string, unknown>) =>
      JSON.stringify({ ...executionInputOf(run), ...change });
    const cases: Array<[string, RpaRunRecord, Record<string, { status: ExecutionStatus; input: string }>]> = [
      ['no execution', viewRun, {}],
      [
        'an execution of the other machine',
        viewRun,
        { 'check-auth-status run-1': { status: 'RUNNING', input: inputOf(viewRun, {}) } },
      ],
      [
        'an execution that ended',
        viewRun,
        { 'view-on-page run-1': { status: 'SUCCEEDED', input: inputOf(viewRun, {}) } },
      ],
      ['an execution whose input is not JSON', viewRun, { 'view-on-page run-1': { status: 'RUNNING', input: '{' } }],
      ['an execution whose input is null', viewRun, { 'view-on-page run-1': { status: 'RUNNING', input: 'null' } }],
      [
        'another client’s execution',
        viewRun,
        { 'view-on-page run-1': { status: 'RUNNING', input: inputOf(viewRun, { clientId: 'client-2' }) } },
      ],
      [
        'an execution for another request',
        viewRun,
        { 'view-on-page run-1': { status: 'RUNNING', input: inputOf(viewRun, { requestExternalId: 'REQ-2' }) } },
      ],
      [
        'an execution for another run',
        viewRun,
        { 'view-on-page run-1': { status: 'RUNNING', input: inputOf(viewRun, { runId: 'run-2' }) } },
      ],
      [
        'an execution on another account',
        viewRun,
        { 'view-on-page run-1': { status: 'RUNNING', input: inputOf(viewRun, { portalAccountId: 'account-2' }) } },
      ],
      [
        'a batch run without its batch',
        runOf('check-auth-status', { batchId: undefined }),
        { 'check-auth-status undefined': { status: 'RUNNING', input: inputOf(batchRun, { batchId: undefined }) } },
      ],
      [
        'another batch',
        batchRun,
        { 'check-auth-status batch-1': { status: 'RUNNING', input: inputOf(batchRun, { batchId: 'batch-2' }) } },
      ],
      [
        'another client’s batch',
        batchRun,
        { 'check-auth-status batch-1': { status: 'RUNNING', input: inputOf(batchRun, { clientId: 'client-2' }) } },
      ],
      [
        'a batch without groups',
        batchRun,
        {
          'check-auth-status batch-1': {
            status: 'RUNNING',
            input: inputOf(batchRun, { groups: { portalAccountId: 'account-1' } }),
          },
        },
      ],
      [
        'a batch whose run is in another account’s group',
        batchRun,
        {
          'check-auth-status batch-1': {
            status: 'RUNNING',
            input: inputOf(batchRun, {
              groups: [
                { portalAccountId: 'account-2', items: [{ requestExternalId: 'REQ-1', runId: 'run-1' }] },
                null,
                { portalAccountId: 'account-1', items: [{ requestExternalId: 'REQ-0', runId: 'run-0' }] },
              ],
            }),
          },
        },
      ],
      [
        'a batch whose group of the account has no items',
        batchRun,
        {
          'check-auth-status batch-1': {
            status: 'RUNNING',
            input: inputOf(batchRun, { groups: [{ portalAccountId: 'account-1', items: 'run-1' }] }),
          },
        },
      ],
      [
        'a batch whose group of the account has the run for another request',
        batchRun,
        {
          'check-auth-status batch-1': {
            status: 'RUNNING',
            input: inputOf(batchRun, {
              groups: [{ portalAccountId: 'account-1', items: [null, { requestExternalId: 'REQ-2', runId: 'run-1' }] }],
            }),
          },
        },
      ],
      [
        'a batch whose group of the account has another run of the request',
        batchRun,
        {
          'check-auth-status batch-1': {
            status: 'RUNNING',
            input: inputOf(batchRun, {
              groups: [{ portalAccountId: 'account-1', items: [{ requestExternalId: 'REQ-1', runId: 'run-2' }] }],
            }),
          },
        },
      ],
    ];

    it.each(cases)('%s', async (_, run, executions) => {
      await expectRefused(worldOf({ run, executions }), requestFor(runOf(run.kind)), 'no_live_execution');
    });
  });

  describe('checks again with the conditional write that records the issue', () => {
    const run = runOf('view-on-page');

    it('refuses when another ask recorded this attempt in between: already_issued', async () => {
      const issued = {
        ...run,
        steps: [...run.steps, { at: EARLIER, step: CREDENTIALS_ISSUED_STEP, detail: 'attempt 1' }],
        version: 5,
      };
      await expectRefused(worldOf({ run, later: [issued] }), requestFor(run), 'already_issued');
    });

    it('refuses when the run ended in between: run_ended', async () => {
      await expectRefused(
        worldOf({ run, later: [{ ...run, status: 'failed', version: 5 }] }),
        requestFor(run),
        'run_ended',
      );
    });

    it('refuses when the run is gone in between: run_not_found', async () => {
      await expectRefused(worldOf({ run, later: [undefined] }), requestFor(run), 'run_not_found');
    });

    it('issues on the run as it is then, when what changed leaves it live', async () => {
      const moved = { ...run, steps: [...run.steps, { at: EARLIER, step: 'browser ready' }], version: 7 };
      const world = worldOf({ run, later: [moved] });
      await world.issuer.issue(requestFor(run));
      expect(world.writes).toEqual([
        {
          ...moved,
          steps: [...moved.steps, { at: NOW.toISOString(), step: 'credentials issued', detail: 'attempt 1' }],
          version: 8,
          updatedAt: NOW.toISOString(),
        },
      ]);
    });
  });
});
