import { InvokeCommand } from '@aws-sdk/client-lambda';
import { invokePayloadOf } from '#lib/aws/invoke-payload';
import { lambda } from '#lib/aws/lambda';
import { payerTokenFunctionName } from '#lib/config/resources';

/*
 * A payer access token from the payer token function (IssuePayerToken), the one function that signs
 * our client assertions (kms:Sign): the PAS tasks ask it with ids only. Locally AWS_ENDPOINT_URL_LAMBDA
 * points the SDK at the loopback stand-in (local/lambda.ts). The token travels in the invoke's answer
 * only: never logged, never stored.
 */

/** What the PAS tasks ask for: a connection's token, a new one when the payer refused the last (`refresh`). */
export interface PayerTokenRequest {
  clientId: string;
  payerConnectionId: string;
  refresh: boolean;
}

export type PayerTokenAnswer =
  /** `expiresAt`: epoch milliseconds, as the payer's token endpoint said (expires_in). */
  | { accessToken: string; expiresAt: number }
  | { refused: 'credentials_refused' | 'no_payer_connection' }
  /** The token endpoint did not answer in time, or answered 429/5xx (its Retry-After, if any). */
  | { unavailable: number | null };

/** The function could not be asked, failed, or answered something else. */
class PayerTokenUnavailable extends Error {
  constructor(what: string) {
    super(`The payer token function ${what}`);
    this.name = 'PayerTokenUnavailable';
  }
}

export async function requestPayerToken(request: PayerTokenRequest): Promise<PayerTokenAnswer> {
  const answer = await lambda.send(
    new InvokeCommand({
      FunctionName: payerTokenFunctionName(),
      InvocationType: 'RequestResponse',
      Payload: Buffer.from(JSON.stringify(request)),
    }),
  );
  const payload = invokePayloadOf(answer.Payload);
  if (answer.FunctionError) throw new PayerTokenUnavailable('failed');
  const { accessToken, expiresAt } = payload ?? {};
  if (typeof accessToken === 'string' && accessToken !== '' && typeof expiresAt === 'number') {
    return { accessToken, expiresAt };
  }
  if (payload?.refused === 'credentials_refused' || payload?.refused === 'no_payer_connection') {
    return { refused: payload.refused };
  }
  if (payload && 'unavailable' in payload) {
    const seconds = payload.unavailable;
    return { unavailable: typeof seconds === 'number' && seconds >= 0 ? seconds : null };
  }
  throw new PayerTokenUnavailable('answered something else than a token');
}
