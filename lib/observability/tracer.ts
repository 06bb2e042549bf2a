import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './names.ts';

/*
 * X-Ray segments for every AWS SDK call (lib/aws/*.ts captures each client where it is created).
 * Powertools turns tracing off outside Lambda (no AWS_EXECUTION_ENV: vitest, the local stack) and
 * when POWERTOOLS_TRACE_ENABLED is false; a captured client then is the client, untouched.
 * Responses and errors are not recorded as metadata (CDK sets POWERTOOLS_TRACER_CAPTURE_RESPONSE
 * and _ERROR to false): both can quote stored data.
 */
export const tracer = new Tracer({ serviceName: SERVICE_NAME });

/** The client, its calls traced as subsegments when tracing is on. */
export const traced = <Client>(client: Client): Client => tracer.captureAWSv3Client(client);
