import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Parameters } from '@medplum/fhirtypes';
import { type AttachmentSubmission, attachmentSubmissionOf, type ReceivedDocument } from './cdex-parameters.ts';
import type { StoredClaim } from './claims.ts';
import { clientOfBearer } from './fhir-requests.ts';
import { r4Errors } from './fhir-validation.ts';
import { mediaTypeOf, outcome, outcomeOf, parseJson, Refusal, readBody, sendFhir } from './http.ts';
import type { PayerState } from './operations.ts';

/*
 * POST /fhir/Claim/$submit-attachment (Da Vinci CDex): documents for a prior authorization this payer
 * holds, named by its Claim's identifier (TrackingId), for its member and from one of its providers, by
 * the client that submitted it. The payer keeps what each document is (code, items, type, size, hash;
 * never the bytes); a pended claim stops asking for the codes that arrived (documentation-requests.ts).
 * 200 with an information OperationOutcome, as CDex answers: there are no output parameters.
 */

const invalid = (text: string) => new Refusal(400, outcomeOf('invalid', text, ['Parameters']));

async function parametersOf(req: IncomingMessage, maxBytes: number): Promise<Parameters> {
  const type = mediaTypeOf(req);
  if (type !== 'application/fhir+json' && type !== 'application/json') {
    throw new Refusal(415, outcomeOf('not-supported', 'Send the Parameters as application/fhir+json.'));
  }
  const tooLarge = () => new Refusal(413, outcomeOf('too-costly', `The body is larger than ${maxBytes} bytes.`));
  const body = parseJson(await readBody(req, maxBytes, tooLarge), invalid);
  if ((body as Parameters | null)?.resourceType !== 'Parameters') {
    throw invalid('The body is the Parameters of $submit-attachment.');
  }
  const issues = await r4Errors(body as Parameters, maxBytes);
  if (issues.length > 0) throw new Refusal(400, outcome(issues));
  return body as Parameters;
}

/** The client's claim the submission names: its identifier, its member, one of its providers. */
const claimOfSubmission = (claims: readonly StoredClaim[], clientId: string, submission: AttachmentSubmission) =>
  claims.find(
    (stored) =>
      stored.clientId === clientId &&
      stored.memberId === submission.memberId &&
      stored.npis.some((npi) => submission.providerIds.includes(npi)) &&
      stored.claimIdentifiers.some(
        (identifier) =>
          identifier.value === submission.trackingId.value &&
          (!identifier.system || !submission.trackingId.system || identifier.system === submission.trackingId.system),
      ),
  );

const refused = (status: number, code: 'not-found' | 'not-supported' | 'business-rule', text: string) =>
  new Refusal(status, outcomeOf(code, text));

/** The documents kept on the claim, each once (by code, items and hash). */
const kept = (stored: StoredClaim, documents: AttachmentSubmission['documents'], receivedAt: string) => {
  const keyOf = (document: Omit<ReceivedDocument, 'receivedAt'>) =>
    JSON.stringify([document.code, document.lineItems, document.sha256]);
  const known = new Set((stored.documents ?? []).map(keyOf));
  const added = documents.filter((document) => !known.has(keyOf(document)));
  stored.documents = [...(stored.documents ?? []), ...added.map((document) => ({ ...document, receivedAt }))];
  return added.length;
};

export async function submitAttachment(state: PayerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const client = clientOfBearer(req, state.tokens, state.clients.get);
  const submission = attachmentSubmissionOf(await parametersOf(req, state.maxBodyBytes));
  if (submission.attachTo !== 'preauthorization') {
    throw refused(422, 'not-supported', 'This payer takes attachments for prior authorizations only (AttachTo).');
  }
  const stored = claimOfSubmission(state.claims.all(), client.clientId, submission);
  // One answer for every mismatch: nothing tells a caller which of identifier, member or provider it missed.
  if (!stored)
    throw refused(422, 'not-found', 'No prior authorization of yours has that TrackingId, member and provider.');
  const sequences = new Set((stored.claim.item ?? []).map((item) => item.sequence));
  if (submission.documents.some((document) => document.lineItems.some((item) => !sequences.has(item)))) {
    throw refused(422, 'business-rule', 'A LineItem names no item of the prior authorization.');
  }
  const added = kept(stored, submission.documents, state.now().toISOString());
  const text = `${submission.documents.length} document(s) received (${added} new) for the prior authorization.`;
  sendFhir(res, 200, outcome([{ severity: 'information', code: 'informational', details: { text } }]));
}
