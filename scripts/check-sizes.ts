// Size check: no function over ~80 lines and no file over ~400 in lib/, local/ and infra/, so that each one
// reads in one sitting.
// Reads the tracked sources with the TypeScript compiler API (a regex cannot tell a function from an object
// literal), so generated code, which git ignores, is left aside. Anything over a limit must be in `allowed`
// below with a reason: the list is the debt on record and only ever shrinks (an entry that no longer matches
// fails too, so a fixed one is removed).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const maxFunctionLines = 80;
const maxFileLines = 400;
const roots = ['lib', 'local', 'infra'];

// "path" for a file, "path#name" for a function; the reason says why it is still there.
const allowed: Record<string, string> = {};

type Finding = { key: string; lines: number; limit: number };

function trackedSources(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', ...roots], { encoding: 'utf8' });
  return out
    .split('\0')
    .filter((path) => /\.tsx?$/.test(path) && !path.includes('/generated/') && !path.endsWith('.d.ts'));
}

function lineSpan(source: ts.SourceFile, node: ts.Node): number {
  const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
  const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
  return end - start + 1;
}

// The name a reader would search for: the declaration's own, else the variable, property or call it sits in.
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  const parent = node.parent;
  const owner = ts.isClassLike(parent) && parent.name ? `${parent.name.getText(source)}.` : '';
  if (ts.isConstructorDeclaration(node)) return `${owner}constructor`;
  if (node.name) return `${owner}${node.name.getText(source)}`;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source);
  }
  if (ts.isCallExpression(parent)) {
    const callee = parent.expression.getText(source).slice(0, 40);
    return `${callee}(…) callback`;
  }
  return '(anonymous)';
}

// Nested functions get a path (`outer/inner`) so two anonymous callbacks in different functions stay apart.
function functionFindings(path: string, source: ts.SourceFile): Finding[] {
  const findings: Finding[] = [];
  const visit = (node: ts.Node, outer: string[]): void => {
    let scope = outer;
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      scope = [...outer, nameOf(fn, source)];
      const lines = lineSpan(source, fn);
      if (lines > maxFunctionLines)
        findings.push({ key: `${path}#${scope.join('/')}`, lines, limit: maxFunctionLines });
    }
    ts.forEachChild(node, (child) => visit(child, scope));
  };
  visit(source, []);
  return findings;
}

function findingsOf(path: string): Finding[] {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const fileLines = source.getLineAndCharacterOfPosition(text.length).line + (text.endsWith('\n') ? 0 : 1);
  const file = fileLines > maxFileLines ? [{ key: path, lines: fileLines, limit: maxFileLines }] : [];
  return [...file, ...functionFindings(path, source)];
}

function main(): void {
  const findings = trackedSources().flatMap(findingsOf);
  const seen = new Set(findings.map((finding) => finding.key));
  const over = findings.filter((finding) => !(finding.key in allowed));
  const stale = Object.keys(allowed).filter((key) => !seen.has(key));
  for (const finding of over) {
    console.error(
      `${finding.key}: ${finding.lines} lines (limit ${finding.limit}); split it, or allow it with a reason`,
    );
  }
  for (const key of stale)
    console.error(`${key}: allowed in scripts/check-sizes.ts but within limits now; remove the entry`);
  if (over.length > 0 || stale.length > 0) process.exit(1);
  console.log(`sizes: ${findings.length} over the limits, all allowed with a reason`);
}

main();
