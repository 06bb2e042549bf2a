import type { Bundle } from '@medplum/fhirtypes';
import type { TaskResult } from '#lib/runs/run-recorder';
import type { RunRef } from '#lib/runs/run-store';
import type { PayerIssue } from './pas/answer-model.ts';
import { codeOf } from './pas/answer-values.ts';
import { requestPathOfIssue } from './pas/issue-paths.ts';
import type { PayerTaskContext } from './payer-task-context.ts';

/*
 * A payer that refuses a submission or an inquiry (an OperationOutcome, or a ClaimResponse whose outcome
 * is `error`): the run ends `payer_refused`, and its steps say which of the request's fields the payer
 * named, in the request's own paths (`/procedures/1/code`), with the payer's issue codes. The payer's
 * free text stays out: it can quote PHI.
 */

/** Issues a run records, at most: the steps are bounded too (MAX_RUN_STEPS). */
const MAX_ISSUES = 20;

/**
 * The issue's code as the answer reader kept it: an OperationOutcome's IssueType (`required`, `code-invalid`)
 * or a ClaimResponse error's X12 901 reject reason (`75`, `T4`), which the client needs to act on; anything
 * out of form is `other`.
 */
const issueCodeOf = (code: string) => codeOf(code) ?? 'other';

/** Each issue's code and the request path it names (or, when none can be found, just its code). */
const refusalDetailsOf = (bundle: Bundle, issues: readonly PayerIssue[]): string[] =>
  issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = requestPathOfIssue(bundle, { severity: 'error', code: 'processing', expression: issue.expression });
    return path ? `${issueCodeOf(issue.code)} ${path}` : issueCodeOf(issue.code);
  });

export async function recordRefusal(
  ctx: PayerTaskContext,
  ref: RunRef,
  bundle: Bundle,
  issues: readonly PayerIssue[],
): Promise<TaskResult> {
  for (const detail of refusalDetailsOf(bundle, issues)) {
    await ctx.addStep(ref, 'the payer refused a field of the request', detail);
  }
  return ctx.finish(ref, 'payer_refused');
}
