import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { localEnvironment, startSettingsOf } from './config.ts';
import { startLocalStack } from './stack.ts';

/**
 * `npm start`: the local stack on PORT (default 3000) with state under .local/.
 * `npm start -- --clean` (or LOCAL_CLEAN=1) starts from empty state. LOCAL_TABLE_NAME names the
 * table (default service-review), so runs against one external DynamoDB can keep apart. The
 * variables are read and checked in local/config.ts.
 */
const { stateDir, clean, port, host, dynamoEndpoint, tableName, s3Endpoint } = startSettingsOf(
  localEnvironment(),
  process.argv,
);
const stackFile = resolve(stateDir, 'stack.json');

// The on-disk DynamoDB state can be opened by one process at a time: say so instead of crashing.
const running = existsSync(stackFile) ? (JSON.parse(readFileSync(stackFile, 'utf8')) as { pid?: number }) : {};
if (running.pid && running.pid !== process.pid && isAlive(running.pid)) {
  process.stderr.write(`The local stack is already running (pid ${running.pid}) with state in ${stateDir}.\n`);
  process.exit(1);
}

function isAlive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const stack = await startLocalStack({
  port,
  host,
  stateDir,
  clean,
  ...(dynamoEndpoint ? { dynamoEndpoint } : {}),
  ...(tableName ? { tableName } : {}),
  ...(s3Endpoint ? { s3Endpoint } : {}),
});
const { seedDemo } = await import('./seed.ts');
const demo = await seedDemo(stateDir);
const { seedPayerApiDemo } = await import('./pas-seed.ts');
await seedPayerApiDemo(stack, demo);
// The admin CLI finds the running stack through this file.
const { pasPayer } = stack;
const payer = {
  url: pasPayer.url,
  fhirBaseUrl: pasPayer.fhirBaseUrl,
  tokenUrl: pasPayer.tokenUrl,
  operatorUrl: pasPayer.operatorUrl,
};
writeFileSync(
  stackFile,
  JSON.stringify({ pid: process.pid, baseUrl: stack.baseUrl, env: stack.env, pasPayer: payer }, null, 2),
);

process.stdout.write(
  [
    '',
    `Service review API (local) listening on ${stack.baseUrl}`,
    `  base URL:        ${stack.baseUrl}/api/external`,
    `  x-api-key:       ${demo.apiKey}`,
    `  client id:       ${demo.clientId}`,
    `  organization id: ${demo.organizationId}`,
    `  client user id:  ${demo.clientUserId}`,
    `  state:           ${stateDir}${clean ? ' (started clean)' : ''}`,
    `  sandbox portal:  ${stack.portal.url} (the payer portal the automation drives; docs/sandbox-portal.md)`,
    `  portal operator: ${stack.portal.operatorUrl} (decide pended authorizations)`,
    `  PAS payer:       ${payer.fhirBaseUrl} (the payer API the PAS channel calls; token URL ${payer.tokenUrl}; docs/pas-payer.md)`,
    `  payer operator:  ${payer.operatorUrl} (register clients, decide pended claims)`,
    '',
    `Try: curl -H 'x-api-key: ${demo.apiKey}' ${stack.baseUrl}/api/external/v1.1/Schemas`,
    '',
  ].join('\n'),
);

const shutdown = async () => {
  rmSync(stackFile, { force: true });
  await stack.close();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
