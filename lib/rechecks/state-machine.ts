import { type AslDefinition, recorderRetry } from '#lib/runs/state-machines';

/*
 * DueRechecks in Amazon States Language (docs/rechecks.md), written once: EventBridge Scheduler starts
 * it on AWS (infra/), the local timer runs it with each Task bound to the same handler (local/rechecks.ts).
 * Its input is nothing; what flows through it is ids: groups of request ids, batch ids.
 */

/** The Task states of DueRechecks; each is run by a function of lib/routes/automation-tasks.ts. */
export type RecheckTaskName = 'SelectDueRechecks' | 'StartRecheckBatch';

/** The resource (Lambda function ARN) of each Task state. */
export type RecheckTaskResources = Record<RecheckTaskName, string>;

export const RECHECKS_STATE_MACHINE_NAME = 'DueRechecks';

/** Seconds: a selection reads and moves on up to 8 × 50 re-checks; a batch start is a few writes and a StartExecution. */
export const RECHECK_TIMEOUTS = { task: 60, execution: 900 } as const;

/** Batches started at once: each is an execution whose sessions wait behind portal-account leases anyway. */
const STARTS_AT_ONCE = 4;

export const dueRechecksDefinition = (resources: RecheckTaskResources): AslDefinition => ({
  Comment:
    'Scheduled re-checks: start a check-auth-status batch for the undecided authorizations due (docs/rechecks.md)',
  StartAt: 'SelectDueRechecks',
  TimeoutSeconds: RECHECK_TIMEOUTS.execution,
  States: {
    SelectDueRechecks: {
      Type: 'Task',
      Resource: resources.SelectDueRechecks,
      TimeoutSeconds: RECHECK_TIMEOUTS.task,
      Retry: [recorderRetry],
      Next: 'StartEachBatch',
    },
    StartEachBatch: {
      Type: 'Map',
      ItemsPath: '$.groups',
      MaxConcurrency: STARTS_AT_ONCE,
      ItemProcessor: {
        ProcessorConfig: { Mode: 'INLINE' },
        StartAt: 'StartRecheckBatch',
        States: {
          StartRecheckBatch: {
            Type: 'Task',
            Resource: resources.StartRecheckBatch,
            TimeoutSeconds: RECHECK_TIMEOUTS.task,
            Retry: [recorderRetry],
            End: true,
          },
        },
      },
      // The batches keep their own record; the loop needs only `more`.
      ResultPath: null,
      Next: 'MoreDue',
    },
    MoreDue: {
      Type: 'Choice',
      Choices: [{ Variable: '$.more', BooleanEquals: true, Next: 'SelectDueRechecks' }],
      Default: 'Done',
    },
    Done: { Type: 'Succeed' },
  },
});
