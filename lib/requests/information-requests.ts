import type { Authorization, InformationRequested, StoredRequest } from '#lib/entities/request';
import type { EventData } from '#lib/entities/service-event';

/*
 * A payer's request for more information as a change of the authorization (docs/payer-api.md, "More
 * information requested"): one is new when it appears or asks for something else (other codes, items
 * or due date); the same one read again (a later $inquire) is no change and keeps when it was first read.
 */

const askedOf = (information: InformationRequested | null | undefined) =>
  information ? JSON.stringify([information.dueBy, information.items]) : null;

/** `next` as written: a request for information that the stored one already makes keeps its requestedAt. */
export const keepingRequestedAt = (request: StoredRequest, next: Authorization): Authorization => {
  const before = request.authorization.informationRequested;
  const asked = next.informationRequested;
  return asked && before && askedOf(asked) === askedOf(before)
    ? { ...next, informationRequested: { ...asked, requestedAt: before.requestedAt } }
    : next;
};

/** The request for information `next` makes that the stored authorization did not; undefined when none is new. */
export const newInformationRequest = (request: StoredRequest, next: Authorization) => {
  const asked = next.informationRequested;
  return asked && askedOf(asked) !== askedOf(request.authorization.informationRequested) ? asked : undefined;
};

/** The event's data: the codes, their items and the due date; never the payer's words (they may name the patient). */
export const informationEventDataOf = (
  externalId: string,
  information: InformationRequested,
): EventData['authorization.information_requested'] => ({
  requestExternalId: externalId,
  dueBy: information.dueBy,
  items: information.items.map(({ code, sequence }) => ({ system: code.system, code: code.code, sequence })),
});
