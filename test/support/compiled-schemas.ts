import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Vitest global setup: handlers and several unit tests import the compiled validators, and the docs routes
 * ship generated files (all gitignored), which a fresh clone has not made yet. Built only when missing, so
 * a run costs nothing once they exist; `npm test` rebuilds them every time (pretest), after a schema change too.
 */
export const setup = () => {
  const built = ['lib/validation/generated/validators.ts', 'lib/openapi/generated/api-reference.js'];
  if (!built.every((file) => existsSync(join(projectRoot, file)))) {
    execFileSync('npm', ['run', 'build:schemas'], { cwd: projectRoot, stdio: 'ignore' });
  }
};
