import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Env } from '#lib/config/environment';

/*
 * The admin CLI's configuration (scripts/admin.ts), read here and nowhere else in it: which deployment
 * it administers, checked before any command runs. The library code it calls reads the deployment's own
 * variables (TABLE_NAME, the endpoints) through lib/config/, from the environment set here.
 */

/** Where the CLI's commands go. */
export type AdminTarget =
  /** ADMIN_TARGET=aws: the deployed table (TABLE_NAME) through the usual AWS credential chain. */
  | {
      kind: 'aws';
      /** REST_API_ID and API_STAGE (prod): the stage whose authorizer cache a revocation flushes. */
      restApiId: string | undefined;
      apiStage: string;
      /** USAGE_PLAN_ID (the UsagePlanId output): the default usage plan new clients' keys join. */
      usagePlanId: string | undefined;
      /** API_URL (the ApiUrl output, or the API's custom domain): where the payer JWKS URLs printed point. */
      apiUrl: string | undefined;
    }
  /** The running local stack (the default), found through its stack.json under LOCAL_STATE_DIR (.local/). */
  | { kind: 'local'; stackFile: string };

/** The target `env` names, or the one sentence that says what is missing. */
export const adminTargetOf = (env: Env): AdminTarget => {
  const target = env.ADMIN_TARGET;
  if (target === 'aws') {
    if (!env.TABLE_NAME) throw new Error('ADMIN_TARGET=aws needs TABLE_NAME (the deployed table name).');
    return {
      kind: 'aws',
      restApiId: env.REST_API_ID || undefined,
      apiStage: env.API_STAGE || 'prod',
      usagePlanId: env.USAGE_PLAN_ID || undefined,
      apiUrl: env.API_URL || undefined,
    };
  }
  if (target && target !== 'local') throw new Error(`ADMIN_TARGET must be aws or local (the default), not ${target}.`);
  const stackFile = join(resolve(env.LOCAL_STATE_DIR || '.local'), 'stack.json');
  if (!existsSync(stackFile)) {
    throw new Error(`No local stack found (${stackFile}). Start it with npm start, or set ADMIN_TARGET=aws.`);
  }
  return { kind: 'local', stackFile };
};

/**
 * The CLI's target, checked; for the local stack, its functions' environment (endpoints, table, key
 * files) is set in this process first, as `npm start` wrote it, for the library code the commands call.
 */
export const adminTarget = (): AdminTarget => {
  const target = adminTargetOf(process.env);
  if (target.kind === 'local') {
    Object.assign(process.env, (JSON.parse(readFileSync(target.stackFile, 'utf8')) as { env: Env }).env);
  }
  return target;
};
