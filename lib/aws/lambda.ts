import { LambdaClient } from '@aws-sdk/client-lambda';
import { traced } from '#lib/observability/tracer';
import { lazyClient } from './lazy-client.ts';

/** Module-scope, created on first use, Lambda client (the browser workers invoking the run credentials function). */
export const lambda = lazyClient(() => traced(new LambdaClient({})));
