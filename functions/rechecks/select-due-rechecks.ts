import { observed } from '#lib/observability/invocation';
import { rechecks } from '#lib/rechecks/service';

/**
 * SelectDueRechecks (the re-check state machine's first task, docs/rechecks.md): the due re-checks,
 * each moved on to its next back-off step, as batches to start → {groups, more}. Ids only.
 */
export const handler = observed('SelectDueRechecks', () => rechecks.selectDue());
