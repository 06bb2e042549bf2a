/**
 * A function's bundle as infra/constructs/service-function.ts has NodejsFunction build it (esbuild:
 * ESM, node22, minified, a linked source map without sources, the createRequire banner, AWS SDK
 * included, installed modules external, the SDK's credential chain aliased to the environment's), with esbuild's metafile: what each input adds to it.
 */
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { BUNDLING, FUNCTION_RUNTIME } from '#infra/constructs/service-function';
import { automationTasks, invokedFunctions } from '#lib/routes/automation-tasks';
import { automationEventFunctions, eventFunctions, webhookDeliveryFunctions } from '#lib/routes/event-functions';
import { routes } from '#lib/routes/route-table';

export interface FunctionBundle {
  handler: string;
  /** The bundle's bytes (index.mjs), without its source map. */
  bytes: number;
  code: string;
  /** The external source map, as CDK ships it beside the bundle. */
  sourceMap: string;
  /** Input path → bytes it adds to the bundle. */
  inputs: Record<string, number>;
  metafile: Metafile;
}

/**
 * Every function CDK deploys: the authorizer, the routes', the event functions', the automation's tasks
 * and event functions, the functions the tasks invoke, and the webhook delivery functions.
 */
export const deployedFunctions = (): { handler: string; installedModules: readonly string[] }[] => {
  const browser = ['@sparticuz/chromium', 'playwright-core'];
  const handlers = new Map<string, readonly string[]>([['authorizer', []]]);
  for (const route of routes) handlers.set(route.handler, []);
  for (const fn of eventFunctions) handlers.set(fn.handler, []);
  for (const task of automationTasks) handlers.set(task.handler, task.worker === 'browser' ? browser : []);
  for (const fn of automationEventFunctions) handlers.set(fn.handler, []);
  for (const fn of invokedFunctions) handlers.set(fn.handler, []);
  for (const fn of webhookDeliveryFunctions) handlers.set(fn.handler, []);
  return [...handlers].map(([handler, installedModules]) => ({ handler, installedModules }));
};

/** BUNDLING translated to esbuild's API as NodejsFunction does; an option not translated here fails loudly. */
export const deployedBuildOptions = (): BuildOptions => {
  const translated = new Set([
    'format',
    'mainFields',
    'banner',
    'minify',
    'sourceMap',
    'sourcesContent',
    'esbuildArgs',
  ]);
  for (const option of Object.keys(BUNDLING)) {
    if (!translated.has(option)) throw new Error(`bench/function-bundle.ts does not build with bundling.${option} yet`);
  }
  for (const arg of Object.keys(BUNDLING.esbuildArgs)) {
    if (arg !== '--alias') throw new Error(`bench/function-bundle.ts does not build with esbuild's ${arg} yet`);
  }
  // `--alias:<package>=<path>` (as NodejsFunction passes each item); the path resolves from the working directory.
  const alias = Object.fromEntries(
    BUNDLING.esbuildArgs['--alias'].map((item) => [
      item.slice(0, item.indexOf('=')),
      item.slice(item.indexOf('=') + 1),
    ]),
  );
  return {
    bundle: true,
    platform: 'node',
    target: FUNCTION_RUNTIME.name.replace('nodejs', 'node').replace('.x', ''),
    format: BUNDLING.format,
    mainFields: [...BUNDLING.mainFields],
    banner: { js: BUNDLING.banner },
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    sourcesContent: BUNDLING.sourcesContent,
    alias,
  };
};

export const bundleFunction = async (
  handler: string,
  installedModules: readonly string[] = [],
): Promise<FunctionBundle> => {
  const result = await build({
    ...deployedBuildOptions(),
    entryPoints: [`functions/${handler}.ts`],
    outfile: 'index.mjs',
    write: false,
    sourcemap: 'linked',
    external: [...installedModules],
    metafile: true,
    logLevel: 'error',
  });
  const output = result.outputFiles.find((file) => file.path.endsWith('.mjs'))!;
  const sourceMap = result.outputFiles.find((file) => file.path.endsWith('.map'))!;
  const meta = Object.values(result.metafile.outputs).find((out) => out.entryPoint)!;
  const inputs = Object.fromEntries(Object.entries(meta.inputs).map(([path, input]) => [path, input.bytesInOutput]));
  return {
    handler,
    bytes: output.contents.byteLength,
    code: output.text,
    sourceMap: sourceMap.text,
    inputs,
    metafile: result.metafile,
  };
};

/** The package (or project folder) an input belongs to: `@aws-sdk/client-s3`, `lib/http`, … */
export const ownerOf = (input: string): string => {
  const modules = input.lastIndexOf('node_modules/');
  if (modules === -1) return input.split('/').slice(0, -1).join('/') || input;
  const parts = input.slice(modules + 'node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
};
