import {
  ATTACHMENT_SUBMISSIONS,
  type AttachmentSubmission,
  DECISION_TIMEFRAMES,
  type DecisionTimeframes,
  PAYER_SUBSCRIPTION_CHANNELS,
  type PayerSubscriptionChannel,
} from '#lib/entities/payer-endpoint';
import { PAYER_ID_MAX_LENGTH, PAYER_ID_PATTERN } from '#lib/validation/schemas/common';
import { type PayerUrlPolicy, payerUrlProblem } from './payer-endpoint-url.ts';

/*
 * What an operator gives `set-payer-endpoint`, checked whole before anything is written, with messages
 * fit for an operator (docs/payer-connections.md, "Payer endpoints").
 */

export interface PayerEndpointInput {
  payerId: string;
  fhirBaseUrl: string;
  tokenUrl: string;
  /** Absent: no name (null). */
  name?: string | undefined;
  /** Absent: DEFAULT_PAYER_SCOPE. */
  scope?: string | undefined;
  /** Absent: `cms-0057-f`. */
  decisionTimeframes?: string | undefined;
  /** Absent: `claim-update`. */
  attachmentSubmission?: string | undefined;
  /** Absent: `none`. */
  subscriptions?: string | undefined;
}

/** What the endpoint's fields are once checked (written as they are). */
export interface CheckedPayerEndpoint {
  payerId: string;
  name: string | null;
  fhirBaseUrl: string;
  tokenUrl: string;
  scope: string;
  decisionTimeframes: DecisionTimeframes;
  attachmentSubmission: AttachmentSubmission;
  subscriptions: PayerSubscriptionChannel;
}

/**
 * The scopes a PAS client asks for unless the payer wants others: writing a Claim (`$submit` and
 * `$inquire` are operations on Claim) and reading the ClaimResponse they answer with, as SMART v1
 * system scopes (the form most PAS servers document).
 */
export const DEFAULT_PAYER_SCOPE = 'system/Claim.write system/ClaimResponse.read';

const MAX_NAME_LENGTH = 100;
const MAX_SCOPES = 20;
const MAX_SCOPE_LENGTH = 1000;
const MAX_SCOPE_TOKEN_LENGTH = 128;
/** RFC 6749 §3.3 scope-token: printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** SMART scopes of a user's or a patient's context: a backend service (no user) asks for system/ scopes. */
const CONTEXT_SCOPE = /^(patient|user)\//;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const payerIdPattern = new RegExp(PAYER_ID_PATTERN);

const checkPayerId = (payerId: string) => {
  if (payerId.length > PAYER_ID_MAX_LENGTH || !payerIdPattern.test(payerId)) {
    throw new Error(
      `A payer id is 1 to ${PAYER_ID_MAX_LENGTH} characters: letters, digits and . _ : - (not starting with a symbol), as a request's patient.PayerId names it.`,
    );
  }
};

const checkedName = (name: string | undefined): string | null => {
  if (name === undefined) return null;
  if (name.trim() === '' || name !== name.trim() || name.length > MAX_NAME_LENGTH || CONTROL.test(name)) {
    throw new Error(
      `--name takes 1 to ${MAX_NAME_LENGTH} characters, without control characters or spaces around them.`,
    );
  }
  return name;
};

/** The scopes, one space between each; refused when not RFC 6749 scope tokens or past the bounds. */
const checkedScope = (scope: string | undefined): string => {
  if (scope === undefined) return DEFAULT_PAYER_SCOPE;
  const tokens = scope.split(' ').filter((token) => token !== '');
  const shape = `--scope takes 1 to ${MAX_SCOPES} space-separated scopes (e.g. "${DEFAULT_PAYER_SCOPE}")`;
  if (tokens.length === 0 || tokens.length > MAX_SCOPES || scope.length > MAX_SCOPE_LENGTH) {
    throw new Error(`${shape}, at most ${MAX_SCOPE_LENGTH} characters in all.`);
  }
  for (const token of tokens) {
    if (!SCOPE_TOKEN.test(token) || token.length > MAX_SCOPE_TOKEN_LENGTH) {
      throw new Error(
        `${shape}; each at most ${MAX_SCOPE_TOKEN_LENGTH} printable ASCII characters but " and \\ (RFC 6749).`,
      );
    }
    if (CONTEXT_SCOPE.test(token)) {
      throw new Error('--scope takes system/ scopes: a backend service has no user or patient context.');
    }
  }
  if (new Set(tokens).size !== tokens.length) throw new Error('--scope names a scope twice.');
  return tokens.join(' ');
};

const checkedTimeframes = (value: string | undefined): DecisionTimeframes => {
  if (value === undefined) return 'cms-0057-f';
  const known = DECISION_TIMEFRAMES.find((timeframes) => timeframes === value);
  if (!known) throw new Error(`--decision-timeframes takes ${DECISION_TIMEFRAMES.join(' or ')}.`);
  return known;
};

const checkedAttachmentSubmission = (value: string | undefined): AttachmentSubmission => {
  if (value === undefined) return 'claim-update';
  const known = ATTACHMENT_SUBMISSIONS.find((submission) => submission === value);
  if (!known) throw new Error(`--attachment-submission takes ${ATTACHMENT_SUBMISSIONS.join(' or ')}.`);
  return known;
};

const checkedSubscriptions = (value: string | undefined): PayerSubscriptionChannel => {
  if (value === undefined) return 'none';
  const known = PAYER_SUBSCRIPTION_CHANNELS.find((channel) => channel === value);
  if (!known) throw new Error(`--subscriptions takes ${PAYER_SUBSCRIPTION_CHANNELS.join(' or ')}.`);
  return known;
};

/** A URL checked by payerUrlProblem, as stored: a base URL without its trailing slash (paths are appended). */
const checkedUrl = (option: string, raw: string, policy: PayerUrlPolicy, base: boolean): string => {
  const problem = payerUrlProblem(raw, policy, { query: !base });
  if (problem) throw new Error(`${option} ${problem}.`);
  const href = new URL(raw).href;
  return base ? href.replace(/\/+$/, '') : href;
};

/** The input, checked whole (the first problem found is the message), under the deployment's URL policy. */
export const checkedPayerEndpoint = (input: PayerEndpointInput, policy: PayerUrlPolicy): CheckedPayerEndpoint => {
  checkPayerId(input.payerId);
  return {
    payerId: input.payerId,
    name: checkedName(input.name),
    fhirBaseUrl: checkedUrl('--fhir-base-url', input.fhirBaseUrl, policy, true),
    tokenUrl: checkedUrl('--token-url', input.tokenUrl, policy, false),
    scope: checkedScope(input.scope),
    decisionTimeframes: checkedTimeframes(input.decisionTimeframes),
    attachmentSubmission: checkedAttachmentSubmission(input.attachmentSubmission),
    subscriptions: checkedSubscriptions(input.subscriptions),
  };
};
