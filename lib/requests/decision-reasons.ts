import type { DecisionReasons } from '#lib/entities/authorization-history';
import type { Authorization, AuthorizationReason } from '#lib/entities/request';
import { DECISION_LIMITS } from '#lib/entities/request';
import type { ItemReasonCodes, ReasonCode } from '#lib/entities/service-event';

/*
 * Why a change denied a request in whole or in part (docs/events.md, "Why it was denied"): the payer's
 * reasons per item and for the whole, as the history entry keeps them (codes and text: the history is
 * read through the API) and as the `authorization.status_changed` event carries them (codes and our ids
 * only: a payer's text may name the patient). Only a change into denied or partially_approved has them.
 */

const EXPLAINED: ReadonlySet<Authorization['status']> = new Set(['denied', 'partially_approved']);

const NO_REASONS: DecisionReasons = { items: [], reasons: [] };

/**
 * The items (all of them, in sequence order: a partial approval reads as which were granted beside which
 * were not) and the claim-level reasons of `next`, bounded as a stored decision is (DECISION_LIMITS).
 */
export const decisionReasonsOf = (next: Authorization): DecisionReasons => {
  if (!EXPLAINED.has(next.status)) return NO_REASONS;
  const items = (next.items ?? [])
    .slice(0, DECISION_LIMITS.items)
    .map(({ sequence, status, reasons }) => ({
      sequence,
      status,
      reasons: reasons.slice(0, DECISION_LIMITS.itemReasons).map(({ system, code, text }) => ({ system, code, text })),
    }))
    .sort((a, b) => a.sequence - b.sequence);
  const reasons = (next.reasons ?? []).slice(0, DECISION_LIMITS.reasons).map(({ system, code, text }) => ({
    system,
    code,
    text,
  }));
  return { items, reasons };
};

const codeOf = ({ system, code }: AuthorizationReason): ReasonCode => ({ system, code });

/**
 * The same, as an event carries it: the codes without the payer's text, the first few of each item
 * (DECISION_LIMITS.eventItemReasonCodes: the worst case then stays under EventBridge's 256 KB).
 */
export const reasonCodesOf = ({ items, reasons }: DecisionReasons) => ({
  items: items.map(
    ({ sequence, status, reasons: itemReasons }): ItemReasonCodes => ({
      sequence,
      status,
      reasonCodes: itemReasons.slice(0, DECISION_LIMITS.eventItemReasonCodes).map(codeOf),
    }),
  ),
  reasonCodes: reasons.map(codeOf),
});
