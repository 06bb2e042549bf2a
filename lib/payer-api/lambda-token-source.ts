import { InvokeCommand } from '@aws-sdk/client-lambda';
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

/** The answer's JSON, read without letting a parser's message (which quotes its input: the token) reach a log. */
const payloadOf = (bytes: Uint8Array | undefined): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(bytes ?? []).toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

export async function requestPayerToken(request: PayerTokenRequest): Promise<PayerTokenAnswer> {
  const answer = await lambda.send(
    new InvokeCommand({
      FunctionName: payerTokenFunctionName(),
      InvocationType: 'RequestResponse',
      Payload: Buffer.from(JSON.stringify(request)),
    }),
  );
  const payload = payloadOf(answer.Payload);
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
