/**
 * The typical peer of a function in bench/cold-start.ts: what a team ships for the same calls with the usual
 * stack, Middy with Powertools' Logger (`injectLambdaContext`), Metrics (`logMetrics`, one metric) and Tracer
 * (`captureLambdaHandler`, every SDK client through `captureAWSv3Client`), built with NodejsFunction's default
 * bundling (aws-cdk-lib's aws-lambda-nodejs: esbuild with `--bundle --platform=node --target=<runtime>`, no
 * `--format` (so CommonJS, `index.js`), no minify, no source map, and `@aws-sdk/*` and `@smithy/*` external
 * (the feature flag `@aws-cdk/aws-lambda-nodejs:sdkV3ExcludeSmithyPackages`, on in new projects and in ours):
 * the SDK then loads from the runtime's node_modules, here the project's, with its default credential chain.
 */
import type { BuildOptions } from 'esbuild';
import { FUNCTION_RUNTIME } from '#infra/constructs/service-function';

/** A floor's parts, which the peer makes too: imports and constructions of the SDK clients, and the calls. */
export interface FloorParts {
  imports: string[];
  constructs: string[];
  body: string[];
}

/** NodejsFunction's defaults, translated to esbuild's API. */
export const PEER_BUILD: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: FUNCTION_RUNTIME.name.replace('nodejs', 'node').replace('.x', ''),
  external: ['@aws-sdk/*', '@smithy/*'],
  minify: false,
  sourcemap: false,
};

/**
 * The packages the peer imports, resolved here so that a missing one fails before any build (and so that
 * the peer's own, the Tracer, shows as used: it is a devDependency for this bench alone).
 */
export const PEER_PACKAGES = [
  import.meta.resolve('@middy/core'),
  import.meta.resolve('@aws-lambda-powertools/logger'),
  import.meta.resolve('@aws-lambda-powertools/metrics'),
  import.meta.resolve('@aws-lambda-powertools/tracer'),
];

/** Every `new …Client(…)` of the floor, traced as Powertools' documentation shows. */
const traced = (construct: string) =>
  construct.replace(/new (\w+Client)\(([^)]*)\)/, 'tracer.captureAWSv3Client(new $1($2))');

export const peerSource = ({ imports, constructs, body }: FloorParts) =>
  [
    "import middy from '@middy/core';",
    "import { Logger } from '@aws-lambda-powertools/logger';",
    "import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';",
    "import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';",
    "import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';",
    "import { Tracer } from '@aws-lambda-powertools/tracer';",
    "import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';",
    ...imports,
    "const logger = new Logger({ serviceName: 'peer' });",
    "const metrics = new Metrics({ namespace: 'Peer', serviceName: 'peer' });",
    "const tracer = new Tracer({ serviceName: 'peer' });",
    ...constructs.map(traced),
    'const TableName = process.env.TABLE_NAME;',
    'const Bucket = process.env.BUCKET_NAME;',
    'const lambdaHandler = async () => {',
    ...body,
    "  metrics.addMetric('requests', MetricUnit.Count, 1);",
    "  logger.info('handled');",
    "  return { statusCode: 200, body: '{}' };",
    '};',
    'export const handler = middy(lambdaHandler)',
    '  .use(captureLambdaHandler(tracer))',
    '  .use(injectLambdaContext(logger))',
    '  .use(logMetrics(metrics));',
  ].join('\n');
