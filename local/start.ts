import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startLocalStack } from './stack.ts';

/**
 * `npm start`: the local stack on PORT (default 3000) with state under .local/.
 * `npm start -- --clean` (or LOCAL_CLEAN=1) starts from empty state.
 */
const stateDir = resolve(process.env.LOCAL_STATE_DIR || '.local');
const clean = process.argv.includes('--clean') || process.env.LOCAL_CLEAN === '1';

const stack = await startLocalStack({
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
  stateDir,
  clean,
  ...(process.env.DYNAMODB_ENDPOINT ? { dynamoEndpoint: process.env.DYNAMODB_ENDPOINT } : {}),
  ...(process.env.S3_ENDPOINT ? { s3Endpoint: process.env.S3_ENDPOINT } : {}),
});
const { seedDemo } = await import('./seed.ts');
const demo = await seedDemo(stateDir);
// The admin CLI finds the running stack through this file.
writeFileSync(resolve(stateDir, 'stack.json'), JSON.stringify({ baseUrl: stack.baseUrl, env: stack.env }, null, 2));

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
    '',
    `Try: curl -H 'x-api-key: ${demo.apiKey}' ${stack.baseUrl}/api/external/v1.1/Schemas`,
    '',
  ].join('\n'),
);

const shutdown = async () => {
  await stack.close();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
