import type { Bundle, Claim, OperationOutcomeIssue } from '@medplum/fhirtypes';
import { claimOf, coverageOf, memberIdOf, providerNpisOf, resolve } from './bundle-reading.ts';
import { isCancel, isClaimUpdate } from './claim-updates.ts';

/*
 * The PAS constraints that matter to this payer, beyond base R4 (fhir-validation.ts): those of the PAS
 * Request and Inquiry Bundle profiles and of the Claim the payer decides on. Each problem is an error
 * issue whose expression is the FHIRPath of the element, from the Bundle, as PAS's errorPath is.
 */

const issue = (expression: string, text: string, code: OperationOutcomeIssue['code'] = 'invariant') => ({
  severity: 'error' as const,
  code,
  details: { text },
  expression: [expression],
});

const CLAIM = 'Bundle.entry[0].resource';

/** Bundle.type, identifier, timestamp, every entry's fullUrl and resource, the Claim first. */
function bundleProblems(bundle: Bundle): OperationOutcomeIssue[] {
  const problems: OperationOutcomeIssue[] = [];
  if (bundle.type !== 'collection') problems.push(issue('Bundle.type', 'A PAS Bundle is of type collection.'));
  if (!bundle.identifier?.value) {
    problems.push(issue('Bundle.identifier', 'A PAS Bundle has an identifier (the submitter’s transaction id).'));
  }
  if (!bundle.timestamp) problems.push(issue('Bundle.timestamp', 'A PAS Bundle has a timestamp.'));
  (bundle.entry ?? []).forEach((entry, index) => {
    if (!entry?.fullUrl) problems.push(issue(`Bundle.entry[${index}].fullUrl`, 'Every entry has a fullUrl.'));
  });
  if (!claimOf(bundle)) problems.push(issue(CLAIM, 'The first entry of a PAS Bundle is the Claim.'));
  return problems;
}

/** What both a request's and an inquiry's Claim need: preauthorization, a patient, a member id, a provider. */
function claimProblems(bundle: Bundle, claim: Claim): OperationOutcomeIssue[] {
  const problems: OperationOutcomeIssue[] = [];
  if (claim.use !== 'preauthorization') problems.push(issue(`${CLAIM}.use`, 'Claim.use is preauthorization.'));
  const references = { patient: claim.patient, insurer: claim.insurer, provider: claim.provider };
  for (const [name, reference] of Object.entries(references)) {
    if (!resolve(bundle, reference)) {
      problems.push(issue(`${CLAIM}.${name}`, `Claim.${name} references an entry of this Bundle.`, 'required'));
    }
  }
  if (!coverageOf(bundle, claim)) {
    problems.push(
      issue(`${CLAIM}.insurance[0].coverage`, 'The Claim’s insurance references a Coverage of this Bundle.'),
    );
  } else if (!memberIdOf(bundle, claim)) {
    const at = coverageOf(bundle, claim)!.index;
    problems.push(
      issue(`Bundle.entry[${at}].resource.subscriberId`, 'The Coverage carries the member id.', 'required'),
    );
  }
  return problems;
}

const INFO_CHANGED = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-infoChanged';

/** A Claim update's: the replaced Claim is in the Bundle (spec-65), a cancel names one, change flags are PAS's codes. */
function updateProblems(bundle: Bundle, claim: Claim): OperationOutcomeIssue[] {
  const problems: OperationOutcomeIssue[] = [];
  (claim.related ?? []).forEach((related, index) => {
    if (related?.claim && resolve(bundle, related.claim)?.resource.resourceType !== 'Claim') {
      const at = `${CLAIM}.related[${index}].claim`;
      problems.push(issue(at, 'The Claim an update replaces is an entry of this Bundle (PAS spec-65).', 'required'));
    }
  });
  if (isCancel(claim) && !isClaimUpdate(claim)) {
    problems.push(issue(`${CLAIM}.related`, 'A cancel names the claim it cancels in Claim.related.', 'required'));
  }
  for (const list of ['item', 'supportingInfo'] as const) {
    (claim[list] ?? []).forEach((entry, index) => {
      const flags = (entry?.extension ?? []).filter((extension) => extension?.url === INFO_CHANGED);
      if (flags.some((flag) => flag.valueCode !== 'added' && flag.valueCode !== 'changed')) {
        problems.push(issue(`${CLAIM}.${list}[${index}]`, 'infoChanged is added or changed.', 'code-invalid'));
      }
    });
  }
  return problems;
}

/** A PAS Request Bundle ($submit): the above, and items each with a productOrService. */
export function requestProblems(bundle: Bundle): OperationOutcomeIssue[] {
  const problems = bundleProblems(bundle);
  const claim = claimOf(bundle);
  if (!claim) return problems;
  problems.push(...claimProblems(bundle, claim), ...updateProblems(bundle, claim));
  const items = claim.item ?? [];
  if (items.length === 0) problems.push(issue(`${CLAIM}.item`, 'The Claim requests at least one item.', 'required'));
  items.forEach((item, index) => {
    if (!item?.productOrService?.coding?.some((coding) => coding?.code)) {
      problems.push(issue(`${CLAIM}.item[${index}].productOrService`, 'Each item names its service.', 'required'));
    }
  });
  return problems;
}

/** A PAS Inquiry Bundle ($inquire): the patient by member id, and the provider by NPI (PAS spec-53). */
export function inquiryProblems(bundle: Bundle): OperationOutcomeIssue[] {
  const problems = bundleProblems(bundle);
  const claim = claimOf(bundle);
  if (!claim) return problems;
  problems.push(...claimProblems(bundle, claim));
  if (resolve(bundle, claim.provider) && providerNpisOf(bundle, claim).length === 0) {
    problems.push(issue(`${CLAIM}.provider`, 'The inquiring provider is identified by NPI.', 'required'));
  }
  return problems;
}

/** Base R4's issues and these, without two issues for one element. */
export function mergeIssues(...lists: OperationOutcomeIssue[][]): OperationOutcomeIssue[] {
  const seen = new Set<string>();
  return lists.flat().filter((problem) => {
    const key = `${problem.expression?.join(',')}|${problem.details?.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
