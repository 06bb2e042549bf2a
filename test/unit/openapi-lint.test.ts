import { fileURLToPath } from 'node:url';
import { type Config, lint, loadConfig, type NormalizedProblem } from '@redocly/openapi-core';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * Redocly's lint of the built document (`npm run build:openapi` writes it; `npm test` builds it first), with the
 * repository's redocly.yaml: `recommended`, plus a description per operation and described global tags. Every
 * error and warning fails, but those redocly.yaml and .redocly.lint-ignore.yaml accept, each with its reason.
 */
const DOCUMENT = fileURLToPath(new URL('../../lib/openapi/generated/openapi.json', import.meta.url));
const CONFIG = fileURLToPath(new URL('../../redocly.yaml', import.meta.url));

/** One line per finding, enough to find and fix it: severity, rule, where, what. */
const lineOf = (problem: NormalizedProblem) => {
  const where = problem.location[0];
  const at = where?.pointer ?? (where && 'start' in where ? `line ${where.start.line}` : '');
  return `${problem.severity} ${problem.ruleId} ${at}: ${problem.message}`;
};

describe("Redocly's lint of the OpenAPI document", () => {
  let config: Config;
  let problems: NormalizedProblem[];
  beforeAll(async () => {
    config = await loadConfig({ configPath: CONFIG });
    problems = await lint({ ref: DOCUMENT, config });
  });

  it('finds nothing that redocly.yaml or .redocly.lint-ignore.yaml does not accept', () => {
    expect(problems.filter((problem) => !problem.ignored).map(lineOf)).toEqual([]);
  });

  it('accepts only findings that still occur (an acceptance does not outlive its reason)', () => {
    const occurring = new Set(
      problems
        .filter((problem) => problem.ignored)
        .map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}`),
    );
    const accepted = Object.values(config.styleguide.ignore).flatMap((rules) =>
      Object.entries(rules).flatMap(([rule, pointers]) => [...pointers].map((pointer) => `${rule} ${pointer}`)),
    );
    expect(accepted.filter((acceptance) => !occurring.has(acceptance))).toEqual([]);
  });
});
