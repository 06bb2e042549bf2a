import type {
  Bundle,
  ClaimResponse,
  OperationOutcome,
  Parameters,
  ParametersParameter,
  Resource,
} from '@medplum/fhirtypes';
import { contextOf, entriesOf, NO_CONTEXT } from './answer-bundle.ts';
import { isRecord, recordsOf, resourceTypeOf, UnreadableAnswer } from './answer-json.ts';
import type { PasAnswer } from './answer-model.ts';
import { answerOfClaimResponse } from './claim-response-reader.ts';
import { isFailure, issuesOfOperationOutcome } from './operation-outcome.ts';

/*
 * The one entry of the answer side (docs/payer-api.md, "Reading a PAS answer"): the body a payer answered $submit or
 * $inquire with, parsed JSON, as a PasAnswer. Payers differ where PAS leaves room, so these shapes are
 * read: a PAS Response Bundle; Parameters holding it (as `return`, or under another name); a bare
 * ClaimResponse; an OperationOutcome; a searchset Bundle (empty, or of response Bundles).
 */

/** Bundles hold answers one level down (Parameters → Bundle → ClaimResponse, searchset → Bundle → ClaimResponse). */
const MAX_DEPTH = 2;
/** The most parameters read of a Parameters answer. */
const MAX_PARAMETERS = 100;
/** The Bundle types an answer comes in: PAS's collection, and searchset from payers that answer $inquire as a search. */
const BUNDLE_TYPES: ReadonlySet<string> = new Set(['collection', 'searchset']);

const invalid = (reason: string): PasAnswer => ({ kind: 'invalid', reason });

/**
 * Several answers as one (the Bundles of an inquiry, the parameters of Parameters): one unreadable
 * makes all unreadable (it may be ours); two decisions are ambiguous (which one answers our request
 * cannot be told from the answer); one decision is the answer; else a refusal if any; else not found.
 */
const oneOf = (answers: PasAnswer[]): PasAnswer => {
  const unreadable = answers.find((answer) => answer.kind === 'invalid');
  if (unreadable) return unreadable;
  const decisions = answers.filter((answer) => answer.kind === 'decision');
  if (decisions.length > 1) return invalid('the payer answered with more than one authorization');
  return decisions[0] ?? answers.find((answer) => answer.kind === 'refused') ?? { kind: 'not_found' };
};

/**
 * A Bundle: its ClaimResponse (PAS: the first entry; a ClaimResponse elsewhere is taken when it is
 * the only one) with the Bundle around it; without one, the Bundles it holds (a searchset of
 * response Bundles), else a failing OperationOutcome it holds (a search that failed), else nothing
 * was found: an inquiry that matched nothing, an empty searchset.
 */
const answerOfBundle = (bundle: Bundle, depth: number): PasAnswer => {
  if (typeof bundle.type !== 'string' || !BUNDLE_TYPES.has(bundle.type)) {
    return invalid('a Bundle of the answer is neither a collection nor a searchset');
  }
  const entries = entriesOf(bundle);
  const responses = entries.filter((entry) => entry.resource.resourceType === 'ClaimResponse');
  if (responses.length > 1 && entries[0]?.resource.resourceType !== 'ClaimResponse') {
    return invalid('a Bundle of the answer holds several ClaimResponses and none first');
  }
  const response = responses[0]?.resource as ClaimResponse | undefined;
  if (response) return answerOfClaimResponse(response, contextOf(response, entries));
  const bundles = entries.filter((entry) => entry.resource.resourceType === 'Bundle');
  if (bundles.length > 0) return oneOf(bundles.map((entry) => answerOfResource(entry.resource, depth + 1)));
  const failure = entries
    .map((entry) => entry.resource)
    .find((resource) => resource.resourceType === 'OperationOutcome' && isFailure(resource as OperationOutcome));
  if (failure) return answerOfResource(failure, depth + 1);
  return { kind: 'not_found' };
};

/**
 * Parameters: the resources of its `return` parameters (PAS's OperationDefinitions name the output
 * so), else of its parameters of any other name (PAS's own inquiry example says `responseBundle`).
 * No resource at all: the inquiry found nothing.
 */
const answerOfParameters = (parameters: Parameters, depth: number): PasAnswer => {
  const list: unknown = parameters.parameter;
  if (Array.isArray(list) && list.length > MAX_PARAMETERS) {
    return invalid(`the answer's Parameters has more than ${MAX_PARAMETERS} parameters`);
  }
  const holding = recordsOf<ParametersParameter>(list, MAX_PARAMETERS).filter(
    (parameter) => resourceTypeOf(parameter.resource) !== undefined,
  );
  const returned = holding.filter((parameter) => parameter.name === 'return');
  const chosen = returned.length > 0 ? returned : holding;
  return oneOf(chosen.map((parameter) => answerOfResource(parameter.resource as Resource, depth + 1)));
};

const answerOfResource = (resource: Resource, depth: number): PasAnswer => {
  if (depth > MAX_DEPTH) return invalid('the answer nests resources deeper than PAS does');
  switch (resource.resourceType) {
    case 'OperationOutcome':
      return { kind: 'refused', issues: issuesOfOperationOutcome(resource) };
    case 'ClaimResponse':
      return answerOfClaimResponse(resource, NO_CONTEXT);
    case 'Bundle':
      return answerOfBundle(resource, depth);
    case 'Parameters':
      return depth === 0
        ? answerOfParameters(resource, depth)
        : invalid('the answer nests Parameters in another resource');
    default:
      return invalid('the answer is a resource PAS does not answer with');
  }
};

/**
 * What a payer's answer to $submit or $inquire says. Never throws on the payer's account: anything
 * that is not a PAS answer, or holds a value the decision rests on out of form, is `invalid` with a
 * reason of ours (docs/payer-api.md, "Reading a PAS answer", lists each shape and each check).
 */
export const readPasAnswer = (body: unknown): PasAnswer => {
  if (!isRecord(body) || typeof body.resourceType !== 'string') return invalid('the answer is not a FHIR resource');
  try {
    return answerOfResource(body as unknown as Resource, 0);
  } catch (error) {
    if (error instanceof UnreadableAnswer) return invalid(error.message);
    throw error;
  }
};
