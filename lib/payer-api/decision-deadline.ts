import type { DecisionTimeframes } from '#lib/entities/payer-endpoint';
import { isUrgentLevel } from './pas/codes.ts';
import { textOf } from './pas/request-fields.ts';

/*
 * When a payer owes a decision on a PAS submission (docs/payer-api.md, "Decision deadlines"): CMS-0057-F
 * gives 72 hours for an urgent request and 7 calendar days for a standard one. "7 calendar days" is read
 * as 7 × 24 hours from the submission's instant, weekends and holidays included, the same arithmetic as
 * the 72 hours (no business-day or end-of-day rounding: a client sees the exact instant). Urgent is what
 * the Claim tells the payer: level of service U or 03, sent as priority `stat`.
 */

const HOUR_MS = 60 * 60 * 1000;
const URGENT_DECISION_HOURS = 72;
const STANDARD_DECISION_HOURS = 7 * 24;

/** Whether the request asks for an urgent decision: its UM06 level of service, as the Claim's priority says. */
export const isUrgentRequest = (document: Record<string, unknown>) => isUrgentLevel(textOf(document.serviceLevelCode));

/** The decision deadline of a submission sent at `sentAt`; null when the payer is not held to the timeframes. */
export const decisionDueAtOf = (sentAt: string, urgent: boolean, timeframes: DecisionTimeframes): string | null => {
  if (timeframes === 'none') return null;
  const hours = urgent ? URGENT_DECISION_HOURS : STANDARD_DECISION_HOURS;
  return new Date(Date.parse(sentAt) + hours * HOUR_MS).toISOString();
};
