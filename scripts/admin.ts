/**
 * Admin CLI: `npm run admin -- <command> [args]`, JSON on stdout.
 *
 * Target: the running local stack by default (found through .local/stack.json, written by
 * `npm start`; LOCAL_STATE_DIR moves it), or AWS with ADMIN_TARGET=aws, TABLE_NAME and the usual
 * AWS credential chain. Tenants are provisioned by operators only: none of this is an API route.
 * npm prints its own banner on stdout; `npm run -s admin -- …` leaves only the JSON.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const usage = `Usage: npm run admin -- <command>
  create-client <name>                                   → {"clientId","apiKey"}
  create-api-key <clientId>                              → {"clientId","keyId","apiKey"}
  revoke-api-key <apiKey>                                → {"revoked":true}
  create-organization <clientId> <name>                  → {"organizationId"}
  create-client-user <clientId> <organizationId> <clientUserId>
Target: the local stack (npm start) by default; ADMIN_TARGET=aws with TABLE_NAME for AWS.`;

const fail = (message: string): never => {
  process.stderr.write(`${JSON.stringify({ error: message })}\n`);
  process.exit(1);
};

const targetEnvironment = () => {
  if (process.env.ADMIN_TARGET === 'aws') {
    if (!process.env.TABLE_NAME) fail('ADMIN_TARGET=aws needs TABLE_NAME (the deployed table name).');
    return;
  }
  const stackFile = join(resolve(process.env.LOCAL_STATE_DIR || '.local'), 'stack.json');
  if (!existsSync(stackFile))
    fail(`No local stack found (${stackFile}). Start it with npm start, or set ADMIN_TARGET=aws.`);
  Object.assign(process.env, (JSON.parse(readFileSync(stackFile, 'utf8')) as { env: Record<string, string> }).env);
};

const [command, ...args] = process.argv.slice(2);
const need = (count: number) => {
  if (args.length !== count || args.some((arg) => arg.trim() === ''))
    fail(`${command} takes ${count} argument(s).\n${usage}`);
  return args as string[];
};

if (!command || command === 'help' || command === '--help') {
  process.stdout.write(`${usage}\n`);
  process.exit(command ? 0 : 1);
}

targetEnvironment();
// Imported after the target is known: the SDK clients read their endpoints at module scope.
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
const { provisioning } = await import('#lib/tenancy/provisioning');
const admin = provisioning(dynamoTenantStore);

const commands: Record<string, () => Promise<unknown>> = {
  'create-client': async () => admin.createClient(need(1)[0]!),
  'create-api-key': async () => admin.createApiKey(need(1)[0]!),
  'revoke-api-key': async () => admin.revokeApiKey(need(1)[0]!),
  'create-organization': async () => {
    const [clientId, name] = need(2);
    return admin.createOrganization(clientId!, name!);
  },
  'create-client-user': async () => {
    const [clientId, organizationId, clientUserId] = need(3);
    return admin.createClientUser(clientId!, organizationId!, clientUserId!);
  },
};

const run = commands[command] ?? (() => fail(`Unknown command ${command}.\n${usage}`));
try {
  process.stdout.write(`${JSON.stringify(await run())}\n`);
} catch (error) {
  const { code, message } = error as Error & { code?: string };
  fail(code === 'ECONNREFUSED' ? 'The local stack is not running: start it with npm start.' : message);
}
