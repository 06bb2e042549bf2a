/**
 * Each mutated module at 90 % or more (docs/mutation-testing.md): Stryker's own `thresholds.break` counts a
 * configuration's modules together, so a weak module can hide behind strong ones. Reads the JSON reports that
 * `npm run mutation` writes and scores every file with Stryker's own metrics library (the numbers its HTML
 * report shows); the last step of `npm run mutation`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { calculateMetrics } from 'mutation-testing-metrics';
import type { MutationTestResult } from 'mutation-testing-report-schema';

const MINIMUM_SCORE = 90;
const REPORTS = ['test/output/mutation/unit.json', 'test/output/mutation/stack.json'];

interface ModuleScore {
  module: string;
  score: number;
  killed: number;
  survived: number;
}

/** The score of every file a report mutated, as Stryker computes it (timeouts count as killed). */
function moduleScoresOf(report: MutationTestResult): ModuleScore[] {
  return calculateMetrics(report.files).childResults.flatMap(function scoresUnder(node): ModuleScore[] {
    if (node.childResults.length > 0) return node.childResults.flatMap(scoresUnder);
    const { mutationScore, killed, timeout, survived, noCoverage } = node.metrics;
    return [
      {
        module: node.file?.name ?? node.name,
        score: mutationScore,
        killed: killed + timeout,
        survived: survived + noCoverage,
      },
    ];
  });
}

function checkMutationScores(): void {
  const present = REPORTS.filter((path) => existsSync(path));
  if (present.length === 0) throw new Error(`No mutation report: run npm run mutation first (${REPORTS.join(', ')}).`);
  const scores = present.flatMap((path) =>
    moduleScoresOf(JSON.parse(readFileSync(path, 'utf8')) as MutationTestResult),
  );
  for (const { module, score, killed, survived } of scores)
    console.log(`${score.toFixed(2).padStart(6)} %  ${module}  (killed ${killed}, survived ${survived})`);
  const low = scores.filter(({ score }) => !(score >= MINIMUM_SCORE));
  if (low.length > 0) {
    console.error(`Below ${MINIMUM_SCORE} %: ${low.map(({ module }) => module).join(', ')}`);
    process.exitCode = 1;
  }
}

checkMutationScores();
