import { InvokeCommand } from '@aws-sdk/client-lambda';
import { invokePayloadOf } from '#lib/aws/invoke-payload';
import { lambda } from '#lib/aws/lambda';
import { runCredentialsFunctionName } from '#lib/config/resources';
import { REFUSAL_REASONS, type RefusalReason } from '#lib/runs/errors';
import type { CredentialsSource } from './credentials-source.ts';
import { PortalFailure } from './drivers/driver.ts';

/** The function could not be asked, or failed otherwise than by refusing: the run ends `portal_error`. */
class CredentialsUnavailable extends Error {
  constructor(what: string) {
    super(`The run credentials function ${what}`);
    this.name = 'CredentialsUnavailable';
  }
}

const isString = (value: unknown): value is string => typeof value === 'string';

/**
 * The run credentials function through Lambda Invoke (RequestResponse), by the name the CDK stack
 * (or the local stack) puts in RUN_CREDENTIALS_FUNCTION_NAME; locally AWS_ENDPOINT_URL_LAMBDA points
 * the SDK at the loopback stand-in (local/lambda.ts). A function error is Lambda's 200 with
 * `FunctionError` and `{errorType, errorMessage}`: CredentialsRefused becomes the run's named outcome.
 */
export const lambdaCredentialsSource: CredentialsSource = {
  issue: async (request) => {
    const answer = await lambda.send(
      new InvokeCommand({
        FunctionName: runCredentialsFunctionName(),
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(request)),
      }),
    );
    const payload = invokePayloadOf(answer.Payload);
    if (answer.FunctionError) {
      if (payload?.errorType !== 'CredentialsRefused') throw new CredentialsUnavailable('failed');
      const reason = REFUSAL_REASONS.find((known) => known === payload.errorMessage) as RefusalReason | undefined;
      throw new PortalFailure('credentials_refused', `The run credentials function refused: ${reason ?? 'unknown'}`);
    }
    const { username, password, totpSecret } = payload ?? {};
    if (!isString(username) || !isString(password) || !(totpSecret === undefined || isString(totpSecret))) {
      throw new CredentialsUnavailable('answered something else than credentials');
    }
    return { username, password, totpSecret: totpSecret ?? null };
  },
};
