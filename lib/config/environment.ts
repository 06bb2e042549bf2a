/*
 * The one reader of the functions' environment (process.env) in lib/ and functions/: biome's
 * noProcessEnv rule refuses it anywhere else (biome.json). What the variables mean and how they are
 * checked lives beside it: resources.ts (deployed resource names, required when used), settings.ts
 * (optional settings, parsed and checked once, at a function's cold start), runtime.ts (what the
 * Lambda runtime and Powertools set, read on every use). Powertools and the AWS SDK read their own
 * documented variables themselves (AWS_REGION, AWS_ENDPOINT_URL_*, POWERTOOLS_SERVICE_NAME...).
 *
 * Read live, never copied: the local stack runs every function in one process and sets their
 * environment after this module may have loaded (local/stack.ts), and tests change a variable
 * between cases (LOG_LEVEL, TABLE_NAME, the X-Ray daemon's address).
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** The process's environment, as the Lambda runtime (or the local stack) set it. */
export const environment = (): Env => process.env;

/** One or more variables are set to what they may not be: each named, with what it must be. */
export class ConfigurationError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`The environment is not a valid configuration:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
    this.name = 'ConfigurationError';
  }
}
