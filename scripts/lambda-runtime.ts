import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * One Lambda invocation in this (fresh, plain Node) process, for `npm run invoke` (scripts/invoke.ts):
 * imports the built bundle as the Node.js runtime does (`<file>.<export>` of the Handler property),
 * calls it with the event and a Lambda context, and writes the outcome as JSON to `resultFile`: the
 * handler's result, or `{errorType, errorMessage, trace}` as Lambda reports a thrown error. Run by
 * Node itself (type stripping), not tsx, so nothing but the bundle and Node is loaded.
 *
 * Usage: node lambda-runtime.ts <bundle dir> <Handler> <event file> <result file>
 */
const [bundleDir, handlerSpec, eventFile, resultFile] = process.argv.slice(2);
if (!bundleDir || !handlerSpec || !eventFile || !resultFile) {
  throw new Error('usage: lambda-runtime.ts <bundle dir> <Handler> <event file> <result file>');
}

const exportSeparator = handlerSpec.lastIndexOf('.');
const moduleName = handlerSpec.slice(0, exportSeparator);
const exportName = handlerSpec.slice(exportSeparator + 1);
const env = process.env;
const timeoutMs = Number(env.AWS_LAMBDA_FUNCTION_TIMEOUT ?? 3) * 1000;

const context = {
  functionName: env.AWS_LAMBDA_FUNCTION_NAME,
  functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION,
  invokedFunctionArn: `arn:aws:lambda:${env.AWS_REGION}:000000000000:function:${env.AWS_LAMBDA_FUNCTION_NAME}`,
  memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
  awsRequestId: randomUUID(),
  logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME,
  logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME,
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
};

/** The handler, imported as the runtime's init phase does. */
const loadHandler = async () => {
  // The Node.js runtime looks for .js, .mjs, then .cjs; CDK's ESM bundles are index.mjs.
  const file = ['.js', '.mjs', '.cjs']
    .map((extension) => join(bundleDir, `${moduleName}${extension}`))
    .find((candidate) => existsSync(candidate));
  if (!file)
    throw Object.assign(new Error(`Cannot find module '${moduleName}'`), { name: 'Runtime.ImportModuleError' });
  const handler = (await import(pathToFileURL(file).href))[exportName];
  if (typeof handler !== 'function') {
    throw Object.assign(new Error(`${handlerSpec} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  }
  return handler as (event: unknown, lambdaContext: typeof context) => Promise<unknown>;
};

const asError = (error: unknown) => {
  const { name, message, stack } = error as Error;
  return { errorType: name, errorMessage: message, trace: stack?.split('\n') ?? [] };
};

const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const initStarted = performance.now();
const handler = await loadHandler().catch((error: unknown) => asError(error));
const initDuration = performance.now() - initStarted;
const deadline = Date.now() + timeoutMs;
process.stdout.write(`START RequestId: ${context.awsRequestId} Version: $LATEST\n`);
const started = performance.now();
const result =
  typeof handler === 'function'
    ? await Promise.resolve()
        .then(() => handler(event, context))
        .then((value) => value ?? null, asError)
    : handler;
const duration = performance.now() - started;
writeFileSync(resultFile, JSON.stringify(result));
process.stdout.write(`END RequestId: ${context.awsRequestId}\n`);
process.stdout.write(
  `REPORT RequestId: ${context.awsRequestId}\tInit Duration: ${initDuration.toFixed(2)} ms\tDuration: ${duration.toFixed(2)} ms\tMemory Size: ${context.memoryLimitInMB} MB\tMax Memory Used: ${Math.round(process.memoryUsage.rss() / 1048576)} MB\n`,
);
// Lambda freezes the process here; open sockets (the SDK's keep-alive) must not keep this one running.
process.exit(0);
