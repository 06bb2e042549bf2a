import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The env-vars file of `sam local invoke --env-vars` and `npm run invoke -- --env-vars`, in SAM's
 * format: `Parameters` for every function, and optionally an object per logical id. It points the
 * functions at a running local stack: its emulators' endpoints (random ports, so the file is written
 * from the running stack's .local/stack.json), table, bucket, state machines and local key files.
 *
 * `npm run -s env-vars -- [--docker] [--out <file>]` writes it (default .local/env-vars.json).
 * `--docker`, for `sam local invoke`: addresses the host as host.docker.internal from sam's
 * containers, and writes beside each template of cdk.out a `<stack>.sam-local.template.json` (a nested
 * stack's: `<id>.nested.sam-local.template.json`) whose functions declare every variable of the file,
 * because SAM only overrides declared variables.
 */
export interface EnvVarsFile {
  Parameters?: Record<string, string>;
  [functionId: string]: Record<string, string> | undefined;
}

/**
 * Variables the deployed template sets from resources (KMS key, secrets): empty, so the functions
 * take the local stack's keys instead. SAM only overrides variables the template declares; these
 * are declared, so SAM clears them too.
 */
const DEPLOYED_ONLY = [
  'SECRETS_KEY_ID',
  'CURSOR_SIGNING_SECRET_ARN',
  'RPA_TOKEN_SECRET_ARN',
  'IDEMPOTENCY_FINGERPRINT_SECRET_ARN',
];

/** The env-vars file for a local stack whose handlers run with `stackEnv` (LocalStack.env). */
export const envVarsOfStack = (stackEnv: Record<string, string>, options: { docker?: boolean } = {}): EnvVarsFile => {
  const host = (value: string) =>
    options.docker ? value.replace(/\/\/(127\.0\.0\.1|localhost)(?=[:/])/, '//host.docker.internal') : value;
  return {
    Parameters: {
      ...Object.fromEntries(DEPLOYED_ONLY.map((name) => [name, ''])),
      ...Object.fromEntries(Object.entries(stackEnv).map(([name, value]) => [name, host(value)])),
    },
  };
};

/** The env-vars of the stack `npm start` runs with state in `stateDir`. */
export const localStackEnvVars = (stateDir: string, options: { docker?: boolean } = {}): EnvVarsFile => {
  const stackFile = join(stateDir, 'stack.json');
  if (!existsSync(stackFile)) {
    throw new Error(`No running local stack (${stackFile}): start one with \`npm start\`, or pass --env-vars <file>`);
  }
  const { env } = JSON.parse(readFileSync(stackFile, 'utf8')) as { env: Record<string, string> };
  return envVarsOfStack(env, options);
};

/** A function's variables from the file: the global ones, then its own (SAM's precedence). */
export const envVarsFor = (file: EnvVarsFile, functionId: string): Record<string, string> => ({
  ...file.Parameters,
  ...file[functionId],
});

/**
 * Copies of cdk.out's templates (same folder, so asset paths still resolve) in which every function
 * declares `names` (empty unless the template sets them): what `sam local invoke --env-vars` needs to
 * set them. Nested stacks' templates too (`<id>.nested.template.json`: the API's route functions, by
 * area), each a template sam can be given on its own. Returns the files written.
 */
export const writeSamLocalTemplates = (cdkOut: string, names: readonly string[]) => {
  const written: string[] = [];
  for (const file of readdirSync(cdkOut).filter((entry) => /^[^.]+(\.nested)?\.template\.json$/.test(entry))) {
    const template = JSON.parse(readFileSync(join(cdkOut, file), 'utf8')) as {
      Resources: Record<
        string,
        { Type: string; Properties: { Environment?: { Variables?: Record<string, unknown> } } }
      >;
    };
    for (const resource of Object.values(template.Resources)) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const variables = resource.Properties.Environment?.Variables ?? {};
      resource.Properties.Environment = {
        Variables: { ...Object.fromEntries(names.map((name) => [name, ''])), ...variables },
      };
    }
    const out = join(cdkOut, file.replace('.template.json', '.sam-local.template.json'));
    writeFileSync(out, JSON.stringify(template, null, 1));
    written.push(out);
  }
  return written;
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const docker = args.includes('--docker');
  const out = resolve(args.includes('--out') ? args[args.indexOf('--out') + 1]! : '.local/env-vars.json');
  const stateDir = resolve(process.env.LOCAL_STATE_DIR || '.local');
  const envVars = localStackEnvVars(stateDir, { docker });
  writeFileSync(out, `${JSON.stringify(envVars, null, 2)}\n`);
  process.stdout.write(`${out}\n`);
  if (docker) {
    const cdkOut = fileURLToPath(new URL('../cdk.out/', import.meta.url));
    if (!existsSync(cdkOut)) throw new Error('No cdk.out: run npm run synth first');
    for (const file of writeSamLocalTemplates(cdkOut, Object.keys(envVars.Parameters ?? {}))) {
      process.stdout.write(`${file}\n`);
    }
  }
}
