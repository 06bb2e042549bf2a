import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * Packages a bundle cannot hold: @sparticuz/chromium finds its compressed Chromium relative to its
 * own files, so bundling would lose them. They ship as installed instead, in `node_modules` beside
 * the bundle, where Node's resolution finds them: the layout CDK's `bundling.nodeModules` produces,
 * but copied from this checkout's node_modules rather than by an `npm install` during synthesis
 * (which needs the registry, and time). The copy includes each package's dependencies.
 */

/** Where Node would resolve `name` from a file in `fromDir`: the nearest `node_modules/<name>` up the tree. */
const packageDirOf = (fromDir: string, name: string, root: string): string | undefined => {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
};

/** The installed directories (relative to the project) of the packages and everything they depend on. */
const installedModuleDirs = (projectRoot: string, names: readonly string[]): string[] => {
  const found = new Set<string>();
  const visit = (fromDir: string, name: string, optional: boolean) => {
    const dir = packageDirOf(fromDir, name, projectRoot);
    if (!dir) {
      if (optional) return;
      throw new Error(`${name} is not installed: run npm install before synthesizing`);
    }
    if (found.has(dir)) return;
    found.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const optionals = new Set(Object.keys(manifest.optionalDependencies ?? {}));
    for (const dependency of new Set([...Object.keys(manifest.dependencies ?? {}), ...optionals])) {
      visit(dir, dependency, optionals.has(dependency));
    }
  };
  for (const name of names) visit(projectRoot, name, false);
  // A package nested in another one's node_modules is copied along with it.
  const dirs = [...found];
  return dirs
    .filter((dir) => !dirs.some((other) => dir.startsWith(`${other}${sep}`)))
    .map((dir) => relative(projectRoot, dir))
    .sort();
};

/**
 * Bundling hooks copying the packages (and their dependencies) into the bundle's `node_modules`, and
 * single files (`assets`: `{ fileName: path from the project root }`) beside the bundle.
 */
export const copyInstalledModules = (
  projectRoot: string,
  names: readonly string[],
  assets: Readonly<Record<string, string>> = {},
): ICommandHooks => {
  const dirs = installedModuleDirs(projectRoot, names);
  for (const source of Object.values(assets)) {
    if (!existsSync(join(projectRoot, source)))
      throw new Error(`${source} is missing: run npm run build:schemas (npm run synth does) before synthesizing`);
  }
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir: string, outputDir: string) => [
      ...dirs.map(
        (dir) =>
          `mkdir -p "${join(outputDir, dirname(dir))}" && cp -R "${join(projectRoot, dir)}" "${join(outputDir, dir)}"`,
      ),
      ...Object.entries(assets).map(
        ([fileName, source]) => `cp "${join(projectRoot, source)}" "${join(outputDir, fileName)}"`,
      ),
    ],
  };
};
