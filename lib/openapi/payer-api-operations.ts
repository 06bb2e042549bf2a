import type { HandlerId } from '#lib/routes/route-table';
import type { OperationDoc } from './operation-doc.ts';

/**
 * What the document says of the payer-API routes: submitting and cancelling through a payer's PAS API, the
 * JWKS payers verify us with, and payers' notifications (./operations.ts holds every route's, these among them).
 */
type PayerApiHandlerId = Extract<
  HandlerId,
  'requests/submit-request' | 'requests/cancel-request' | 'payers/get-payer-jwks' | 'payers/receive-payer-notification'
>;

export const payerApiOperations: Record<PayerApiHandlerId, OperationDoc> = {
  'requests/submit-request': {
    summary: "Submit a request to its payer's prior-authorization API",
    tag: 'Requests',
    body: { schema: 'SubmitRequest', optional: true },
    idempotent: true,
    description:
      "Sends the request to its payer's FHIR prior-authorization API (Da Vinci PAS `Claim/$submit`) through the organization's payer connection: `payerConnectionExternalId` when given, else its active connection to `patient.PayerId`. A payer without an API: 422 `no_payer_api` (portal drivers never submit); no usable connection: 422 `no_payer_connection` or `payer_connection_not_active`; fields PAS cannot do without: 422 `request_not_mappable` listing each with its path, nothing sent. A request the payer already holds a claim of goes as a PAS Claim update of that claim (never a second claim), with `attachmentIds` the answer to a request for more information; a request the payer denied: 422 `authorization_denied` (a new request is needed); an attachment not available: 422 `attachment_not_available`; a submission or cancel of the request under way: 409 `submission_in_progress`. `dryRun: true` answers the Bundle and its problems and sends nothing. The run's outcome and the request's authorization follow (docs/payer-api.md).",
    outcomes: {
      200: { description: 'Dry run: the Bundle that would be sent, and its problems', body: 'SubmissionDryRun' },
      202: { description: 'The submission run is queued', body: 'SubmissionStarted', headers: ['Location'] },
    },
    failures: [404, 409, 422],
  },
  'requests/cancel-request': {
    summary: "Cancel a request's authorization at its payer",
    tag: 'Requests',
    body: { schema: 'CancelRequest' },
    idempotent: true,
    description:
      "Cancels the claim the payer holds for the request (the latest claim or claim update sent to its PAS API) with a PAS Claim of certification type 3, through the organization's payer connection chosen as a submission's is. The authorization becomes `cancelled` when the payer confirms it (the run's outcome and the request's history follow, docs/payer-api.md). A request whose authorization is followed through the payer's portal: 422 `not_supported_on_portal`; never sent to the payer's API: 422 `not_submitted`; cancelled already: 409 `already_cancelled`; a cancel under way: 409 `cancel_in_progress`; no usable connection: 422 as a submission. Nothing is sent when refused.",
    outcomes: {
      202: { description: 'The cancel run is queued', body: 'SubmissionStarted', headers: ['Location'] },
    },
    failures: [404, 409, 422],
  },
  'payers/get-payer-jwks': {
    summary: "An API client's payer signing keys (JWKS)",
    tag: 'Payer keys',
    description:
      'The JWK Set payers fetch from the jwksUri registered with them, to verify our SMART Backend Services client assertions: public keys only (RS384), the signing key and, around a rotation, its predecessor or successor. Cacheable for the time Cache-Control says; a new key is published that long before it signs.',
    outcomes: { 200: { description: 'The published keys', body: 'PayerJwks', headers: ['Cache-Control'] } },
    failures: [404],
  },
  'payers/receive-payer-notification': {
    summary: "A payer's notification on our PAS subscription",
    tag: 'Payer notifications',
    description:
      "For payers, not API clients: the notification URL our PAS Subscription gave the payer, authenticated by the channel header it was given (`Authorization: Bearer <secret>`), up to 1 MiB. A handshake or heartbeat is recorded (200). An event notification (202) starts a `$inquire` of the claims it names through the subscription's payer connection; that read, not the notification, changes an authorization. Refused without storing anything: an unknown subscription (404), a missing or wrong secret (401), a body naming another subscription or no claim of this connection (422), an event number not above the last one received (409, a replay).",
    body: { fhir: 'PayerNotification' },
    outcomes: {
      200: { description: 'A handshake, heartbeat or status, recorded', body: 'PayerNotificationReceipt' },
      202: { description: 'An event: the status reads of its claims have started', body: 'PayerNotificationReceipt' },
    },
    failures: [401, 404, 409, 422],
  },
};
