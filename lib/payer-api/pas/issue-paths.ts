import type { Bundle, OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';
import { type EntrySource, entrySources, PATH_RULES, type PathRule } from './request-paths.ts';

/*
 * A payer's OperationOutcome issue (or a PAS ClaimResponse error path) names an element of the Bundle we
 * sent: `Bundle.entry[0].resource.item[1].productOrService`, `Claim.item[1]`, the IG's own
 * `Bundle.entry[1].Organization.name`, or an R4 XPath location `/f:Bundle/f:entry[2]/f:resource/...`.
 * This reads it back to the request field it came from (`/procedures/1/code`) through the rules and anchors
 * of request-paths.ts, or null when the element came from no request field or cannot be found.
 */

interface Step {
  name: string;
  index?: number;
  /** The argument of `extension('url')`. */
  argument?: string;
}

const STEP = /^([A-Za-z][A-Za-z0-9_]*)(?:\[(\d+)\])?$/;
const CALL = /^([A-Za-z]+)\((.*)\)$/;

/** FHIRPath's dot-separated steps, split outside parentheses and quotes. */
const splitDots = (expression: string): string[] => {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (const character of expression) {
    if (character === "'") quoted = !quoted;
    else if (!quoted && character === '(') depth++;
    else if (!quoted && character === ')') depth--;
    if (character === '.' && depth === 0 && !quoted) {
      parts.push(current);
      current = '';
    } else current += character;
  }
  parts.push(current);
  return parts;
};

/** XPath (`/f:Bundle/f:entry[2]/…`, 1-based) in FHIRPath's dotted form (0-based). */
const fromXPath = (location: string): string =>
  location
    .split('/')
    .filter((part) => part !== '')
    .map((part) => part.replace(/^f:/, '').replace(/\[(\d+)\]$/, (_, n: string) => `[${Number(n) - 1}]`))
    .join('.');

/** The steps of an expression; type casts are skipped, and a step we cannot follow ends the walk there. */
const stepsOf = (expression: string): Step[] => {
  const dotted = expression.trim().startsWith('/') ? fromXPath(expression.trim()) : expression.trim();
  const steps: Step[] = [];
  for (const part of splitDots(dotted)) {
    const call = CALL.exec(part);
    if (call?.[1] === 'ofType' || call?.[1] === 'as') continue;
    if (call?.[1] === 'extension') {
      steps.push({ name: 'extension', argument: call[2]!.replace(/^'|'$/g, '') });
      continue;
    }
    if (call?.[1] === 'first' && steps.length > 0) {
      steps[steps.length - 1]!.index = 0;
      continue;
    }
    const step = STEP.exec(part);
    if (!step) break;
    steps.push({ name: step[1]!, ...(step[2] !== undefined ? { index: Number(step[2]) } : {}) });
  }
  return steps;
};

const isResourceType = (name: string) => /^[A-Z]/.test(name);

/** The entry an expression starts at, and the steps left inside its resource. */
const locate = (bundle: Bundle, steps: Step[]): { index: number; rest: Step[] } | null => {
  const entries = bundle.entry ?? [];
  const [head, second, ...tail] = steps;
  if (head?.name === 'Bundle') {
    if (second?.name !== 'entry' || second.index === undefined) return null;
    let rest = tail;
    if (rest[0]?.name === 'resource') rest = rest.slice(1);
    if (rest[0] && isResourceType(rest[0].name)) {
      // The IG's form names the resource's type: it must be the type of that entry.
      if (entries[second.index]?.resource?.resourceType !== rest[0].name) return null;
      rest = rest.slice(1);
    }
    return { index: second.index, rest };
  }
  if (!head || !isResourceType(head.name)) return null;
  // A resource-rooted path: the Claim is the first entry; any other type must be the only one of its kind.
  const matching = entries.flatMap((entry, index) => (entry.resource?.resourceType === head.name ? [index] : []));
  const index = head.name === 'Claim' ? matching[0] : matching.length === 1 ? matching[0] : undefined;
  return index === undefined ? null : { index, rest: steps.slice(1) };
};

const resolve = (rule: PathRule, anchor: string, resource: Resource): string | null => {
  if (rule === null) return null;
  const path = typeof rule === 'function' ? rule(resource) : rule;
  if (path.startsWith('/')) return path;
  if (anchor === '') return null;
  return path === '' ? anchor : `${anchor}/${path}`;
};

/** What tells apart elements of one name: an extension's url, an identifier's or a contact point's system. */
const discriminatorOf = (step: Step, element: unknown): string | undefined => {
  if (step.argument !== undefined) return step.argument;
  const fields = (typeof element === 'object' && element !== null ? element : {}) as Record<string, unknown>;
  const value = step.name === 'extension' ? fields.url : fields.system;
  return typeof value === 'string' ? value : undefined;
};

/**
 * The element a step reaches: by index, by an extension's url, or the only one. Several without either is
 * every one of them, and no anchor of one stands for all: the walk goes on by rules alone.
 */
const elementAt = (node: unknown, step: Step): { element: unknown; anchored: boolean } => {
  const value = (node as Record<string, unknown> | undefined)?.[step.name];
  if (!Array.isArray(value)) return { element: value, anchored: true };
  if (step.index !== undefined) return { element: value[step.index], anchored: true };
  if (step.argument !== undefined) {
    return { element: value.find((item) => (item as { url?: unknown })?.url === step.argument), anchored: true };
  }
  return { element: value[0], anchored: value.length === 1 };
};

/** Walks the steps through the resource, keeping the request path of the deepest element a rule or anchor names. */
const walk = (resource: Resource, source: EntrySource, steps: Step[]): string | null => {
  const rules = PATH_RULES[source.kind];
  let key: string = resource.resourceType;
  let anchor = source.anchor;
  let node: unknown = resource;
  let result = key in rules ? resolve(rules[key]!, anchor, resource) : null;
  for (const step of steps) {
    const { element, anchored } = elementAt(node, step);
    // A numbered element that is not in the Bundle we sent: we cannot tell what it was.
    if (step.index !== undefined && element === undefined) return null;
    const discriminated = `${key}.${step.name}:${discriminatorOf(step, element)}`;
    key = discriminated in rules ? discriminated : `${key}.${step.name}`;
    const id = (element as { id?: unknown } | undefined)?.id;
    if (anchored && typeof id === 'string' && id.startsWith('/')) {
      anchor = id;
      result = id;
    } else if (key in rules) {
      // An element of ours is no request field; a relative rule without its anchor keeps what we had.
      const rule = rules[key]!;
      result = rule === null ? null : (resolve(rule, anchor, resource) ?? result);
    }
    node = element;
  }
  return result;
};

const pathOfExpression = (bundle: Bundle, sources: Map<string, EntrySource>, expression: string): string | null => {
  const located = locate(bundle, stepsOf(expression));
  const entry = located ? bundle.entry?.[located.index] : undefined;
  const source = entry?.fullUrl !== undefined ? sources.get(entry.fullUrl) : undefined;
  if (!located || !entry?.resource || !source) return null;
  return walk(entry.resource, source, located.rest);
};

/** The request path of an issue about our Bundle, from its expressions, then its locations; null when none maps. */
export const requestPathOfIssue = (bundle: Bundle, issue: OperationOutcomeIssue): string | null => {
  const sources = entrySources(bundle);
  for (const expression of [...(issue.expression ?? []), ...(issue.location ?? [])]) {
    const path = pathOfExpression(bundle, sources, expression);
    if (path !== null) return path;
  }
  return null;
};
