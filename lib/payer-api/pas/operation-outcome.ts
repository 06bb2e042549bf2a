import type { ClaimResponse, ClaimResponseError, OperationOutcome, OperationOutcomeIssue } from '@medplum/fhirtypes';
import { codingsOf, extensionOf, isRecord, MAX_LIST_READ, recordsOf } from './answer-json.ts';
import type { PayerIssue } from './answer-model.ts';
import { codeOf, expressionOf, textOf } from './answer-values.ts';

/*
 * The payer's refusals as PayerIssues (docs/payer-api.md, "Refusals"): the issues of an
 * OperationOutcome (PAS: a request the payer could not process at all), and the errors of a
 * ClaimResponse whose outcome is `error` (X12 AAA rejections, PAS ClaimResponse.error).
 */

/** The most issues kept of one answer. */
const MAX_ISSUES = 20;
/** The most expressions kept of one issue. */
const MAX_EXPRESSIONS = 10;
const SEVERITIES: ReadonlySet<string> = new Set(['fatal', 'error', 'warning', 'information']);
const ERROR_PATH = ['http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-errorPath'];

/** The expressions in form among these, up to MAX_EXPRESSIONS. */
const expressionsOf = (values: unknown[]): string[] =>
  values
    .slice(0, MAX_LIST_READ)
    .map(expressionOf)
    .filter((expression) => expression !== null)
    .slice(0, MAX_EXPRESSIONS);

const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value.slice(0, MAX_LIST_READ) : []);

/**
 * One OperationOutcome issue: its severity (one of FHIR's four) and code (an IssueType) must be in
 * form, or the issue is not kept. Details are `details.text`, else the first coding's display;
 * `diagnostics` is never kept (payers put validator output and echoed request values there).
 * Expressions are `expression`, then the deprecated `location`.
 */
const issueOf = (issue: OperationOutcomeIssue): PayerIssue | null => {
  const severity = typeof issue.severity === 'string' && SEVERITIES.has(issue.severity) ? issue.severity : null;
  const code = codeOf(issue.code);
  if (severity === null || code === null) return null;
  const details = isRecord(issue.details) ? issue.details : {};
  return {
    severity,
    code,
    details: textOf(details.text) ?? textOf(codingsOf(details)[0]?.display),
    expression: expressionsOf([...listOf(issue.expression), ...listOf(issue.location)]),
  };
};

/** The issues of an OperationOutcome that are in form, up to MAX_ISSUES. */
export const issuesOfOperationOutcome = (outcome: OperationOutcome): PayerIssue[] =>
  recordsOf<OperationOutcomeIssue>(outcome.issue, MAX_LIST_READ)
    .map(issueOf)
    .filter((issue) => issue !== null)
    .slice(0, MAX_ISSUES);

/** Whether an OperationOutcome says the request failed (an issue of severity error or fatal). */
export const isFailure = (outcome: OperationOutcome): boolean =>
  issuesOfOperationOutcome(outcome).some((issue) => issue.severity === 'error' || issue.severity === 'fatal');

/**
 * One ClaimResponse error as an issue: severity `error`, the code its first coding in form carries
 * (X12 901 reject reasons, e.g. `15`), the coding's display or the concept's text, and the PAS
 * errorPath extension (a FHIRPath into the Bundle we sent) as its expression. An error without a
 * code in form is not kept.
 */
const issueOfError = (error: ClaimResponseError): PayerIssue | null => {
  const coding = codingsOf(error.code).find((candidate) => codeOf(candidate.code) !== null);
  if (!coding) return null;
  const concept = isRecord(error.code) ? error.code : {};
  return {
    severity: 'error',
    code: coding.code as string,
    details: textOf(coding.display) ?? textOf(concept.text),
    expression: expressionsOf([extensionOf(error, ERROR_PATH)?.valueString]),
  };
};

/** The errors of a ClaimResponse in form, as issues, up to MAX_ISSUES. */
export const issuesOfClaimResponseErrors = (response: ClaimResponse): PayerIssue[] =>
  recordsOf<ClaimResponseError>(response.error, MAX_LIST_READ)
    .map(issueOfError)
    .filter((issue) => issue !== null)
    .slice(0, MAX_ISSUES);
