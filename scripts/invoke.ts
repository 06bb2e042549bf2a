import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type EnvVarsFile, envVarsFor, localStackEnvVars } from './env-vars.ts';

/**
 * `npm run invoke -- <FunctionId> <event.json> [--env-vars <file>] [--no-synth]`: `sam local invoke`
 * without Docker. Runs the function's built bundle (the esbuild output in cdk.out) in a fresh Node 22
 * process (scripts/lambda-runtime.ts) with the Lambda runtime's variables, the template's literal
 * environment (NODE_OPTIONS) and the env-vars file's values (SAM's format), prints the function's
 * output and the START/END/REPORT lines on stderr and the result JSON on stdout, as sam does.
 * Without --env-vars, the running local stack's endpoints (.local/stack.json, `npm start`).
 * cdk.out is synthesized first when it is missing or older than the sources, unless --no-synth.
 */

const projectRoot = fileURLToPath(new URL('../', import.meta.url));
export const CDK_OUT = join(projectRoot, 'cdk.out');

interface TemplateFunction {
  Type: string;
  Metadata?: Record<string, string>;
  Properties: {
    Handler: string;
    MemorySize?: number;
    Timeout?: number;
    Environment?: { Variables?: Record<string, unknown> };
  };
}

export interface BuiltFunction {
  functionId: string;
  /** The bundle's folder (the asset). */
  bundleDir: string;
  handler: string;
  memorySize: number;
  timeout: number;
  /** The template's variables with literal values; references to deployed resources are left out. */
  literalEnvironment: Record<string, string>;
}

/** The function `name` (a logical id, with or without its `Function` suffix) in any template of cdk.out. */
export const builtFunction = (name: string, cdkOut = CDK_OUT): BuiltFunction => {
  const ids = name.endsWith('Function') ? [name] : [name, `${name}Function`];
  const known: string[] = [];
  for (const file of readdirSync(cdkOut).filter((entry) => entry.endsWith('.template.json'))) {
    const resources = (
      JSON.parse(readFileSync(join(cdkOut, file), 'utf8')) as { Resources: Record<string, TemplateFunction> }
    ).Resources;
    for (const [id, resource] of Object.entries(resources)) {
      if (resource.Type !== 'AWS::Lambda::Function' || !resource.Metadata?.['aws:asset:path']) continue;
      known.push(id);
      if (!ids.includes(id)) continue;
      const variables = resource.Properties.Environment?.Variables ?? {};
      return {
        functionId: id,
        bundleDir: join(cdkOut, resource.Metadata['aws:asset:path']),
        handler: resource.Properties.Handler,
        memorySize: resource.Properties.MemorySize ?? 128,
        timeout: resource.Properties.Timeout ?? 3,
        literalEnvironment: Object.fromEntries(
          Object.entries(variables).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
        ),
      };
    }
  }
  throw new Error(`No function ${name} in ${cdkOut}. Functions: ${known.sort().join(', ')}`);
};

const SOURCES = ['functions', 'lib', 'infra', 'package-lock.json', 'cdk.json'];

const newestMtime = (path: string): number => {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(
    stat.mtimeMs,
    ...readdirSync(path)
      .filter((entry) => entry !== 'generated')
      .map((entry) => newestMtime(join(path, entry))),
  );
};

/** Whether cdk.out is missing or older than a source it is built from. */
export const synthesisIsStale = (cdkOut = CDK_OUT) => {
  const manifest = join(cdkOut, 'manifest.json');
  if (!existsSync(manifest)) return true;
  const synthesized = statSync(manifest).mtimeMs;
  return SOURCES.some((source) => newestMtime(join(projectRoot, source)) > synthesized);
};

export const synthesize = () => {
  process.stderr.write('Synthesizing cdk.out (npm run synth)...\n');
  const run = spawnSync('npm', ['run', '-s', 'synth', '--', '--quiet'], {
    cwd: projectRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (run.status !== 0) throw new Error('npm run synth failed');
};

export interface Invocation {
  /** The handler's result, or Lambda's `{errorType, errorMessage, trace}`. */
  result: unknown;
  /** What the function wrote, and the START/END/REPORT lines. */
  logs: string;
  timedOut: boolean;
}

/** Runs `fn` once with `eventFile` in a fresh Node process, with the Lambda runtime's environment and `variables`. */
export const invokeBuilt = async (
  fn: BuiltFunction,
  eventFile: string,
  variables: Record<string, string>,
): Promise<Invocation> => {
  const scratch = mkdtempSync(join(tmpdir(), 'invoke-'));
  const resultFile = join(scratch, 'result.json');
  const env = {
    // What the Lambda runtime sets; nothing of the caller's shell (an AWS profile) leaks in.
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TZ: 'UTC',
    LANG: 'en_US.UTF-8',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_LAMBDA_FUNCTION_NAME: fn.functionId,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(fn.timeout),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionId}`,
    AWS_LAMBDA_LOG_STREAM_NAME: 'local',
    LAMBDA_TASK_ROOT: fn.bundleDir,
    ...fn.literalEnvironment,
    ...variables,
  };
  const child = spawn(
    process.execPath,
    [
      // The runtime sizes the heap from the function's memory.
      `--max-old-space-size=${Math.floor(fn.memorySize * 0.9)}`,
      fileURLToPath(new URL('./lambda-runtime.ts', import.meta.url)),
      fn.bundleDir,
      fn.handler,
      resolve(eventFile),
      resultFile,
    ],
    { cwd: fn.bundleDir, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let logs = '';
  child.stdout.on('data', (chunk: Buffer) => {
    logs += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    logs += chunk;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, fn.timeout * 1000);
  await new Promise<void>((done) => child.once('close', () => done()));
  clearTimeout(timer);
  try {
    const result: unknown = timedOut
      ? { errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${fn.timeout}.00 seconds` }
      : existsSync(resultFile)
        ? JSON.parse(readFileSync(resultFile, 'utf8'))
        : { errorType: 'Runtime.ExitError', errorMessage: `The process exited with ${child.exitCode}` };
    return { result, logs, timedOut };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
};

const main = async (args: string[]) => {
  const flag = (name: string) => {
    const index = args.indexOf(name);
    return index === -1 ? undefined : args.splice(index, 2)[1];
  };
  const noSynth = args.includes('--no-synth');
  const envVarsFile = flag('--env-vars');
  const [name, eventFile] = args.filter((arg) => arg !== '--no-synth');
  if (!name || !eventFile) {
    process.stderr.write('usage: npm run invoke -- <FunctionId> <event.json> [--env-vars <file>] [--no-synth]\n');
    process.exit(2);
  }
  if (!noSynth && synthesisIsStale()) synthesize();
  const fn = builtFunction(name);
  const envVars: EnvVarsFile = envVarsFile
    ? JSON.parse(readFileSync(envVarsFile, 'utf8'))
    : localStackEnvVars(join(projectRoot, '.local'));
  const { result, logs } = await invokeBuilt(fn, eventFile, envVarsFor(envVars, fn.functionId));
  process.stderr.write(logs);
  process.stdout.write(`${JSON.stringify(result)}\n`);
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main(process.argv.slice(2)).catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });
}
