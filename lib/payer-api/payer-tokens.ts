import type { PayerConnectionAttentionReason } from '#lib/entities/payer-connection';
import { PAYER_CONNECTION_ATTENTION_REASONS } from '#lib/entities/payer-connection';
import type { PayerConnectionStore } from '#lib/payer-connections/payer-connection-store';
import type { PayerEndpointStore } from '#lib/payer-endpoints/payer-endpoint-store';
import { InvalidTaskInput } from '#lib/runs/errors';
import { idsOf } from '#lib/runs/run-recorder';
import { CredentialsRefused, NoSigningKey, PayerTimeout, PayerUnavailable } from './errors.ts';
import type { PayerTokenAnswer } from './lambda-token-source.ts';
import type { SmartConnection } from './smart/token-cache.ts';
import type { AccessToken } from './smart/token-client.ts';

/*
 * The payer token function's work (IssuePayerToken): a connection's access token, from the cache while
 * it is fresh, else through our client assertion at the payer's token endpoint. A refused assertion marks
 * the connection `attention`, as a wrong portal password marks a portal account, and the tasks end the
 * run `credentials_refused`. Tokens are never logged or stored: they travel in the invoke's answer only.
 */

export interface PayerTokenDependencies {
  connections: Pick<PayerConnectionStore, 'get' | 'markAttention'>;
  endpoints: Pick<PayerEndpointStore, 'get'>;
  accessTokenFor: (connection: SmartConnection, options: { refresh: boolean }) => Promise<AccessToken>;
}

/** The OAuth error the token endpoint gave, as a reason the connection shows; anything else is `invalid_client`. */
const attentionReasonOf = (oauthError: string | null): PayerConnectionAttentionReason =>
  PAYER_CONNECTION_ATTENTION_REASONS.find((reason) => reason === oauthError) ?? 'invalid_client';

export const payerTokenIssuer = (deps: PayerTokenDependencies) => ({
  issue: async (input: unknown): Promise<PayerTokenAnswer> => {
    const { clientId, payerConnectionId } = idsOf(input, ['clientId', 'payerConnectionId']) as {
      clientId: string;
      payerConnectionId: string;
    };
    const refresh = (input as { refresh?: unknown }).refresh;
    if (typeof refresh !== 'boolean') throw new InvalidTaskInput('refresh');
    const connection = await deps.connections.get(clientId, payerConnectionId);
    const endpoint = connection?.status === 'active' ? await deps.endpoints.get(connection.payerId) : undefined;
    if (!connection || !endpoint) return { refused: 'no_payer_connection' };
    const smart: SmartConnection = {
      apiClientId: clientId,
      connectionId: payerConnectionId,
      payerClientId: connection.payerClientId,
      tokenUrl: endpoint.tokenUrl,
      scope: endpoint.scope,
    };
    try {
      const { accessToken, expiresAt } = await deps.accessTokenFor(smart, { refresh });
      return { accessToken, expiresAt };
    } catch (error) {
      if (error instanceof CredentialsRefused) {
        const reason = attentionReasonOf(error.oauthError);
        await deps.connections.markAttention(clientId, payerConnectionId, reason, {
          payerClientId: connection.payerClientId,
        });
        return { refused: 'credentials_refused' };
      }
      // Our side: the client has no key that may sign yet (an operator rotates one in).
      if (error instanceof NoSigningKey) return { refused: 'credentials_refused' };
      if (error instanceof PayerUnavailable) return { unavailable: error.retryAfterSeconds };
      if (error instanceof PayerTimeout) return { unavailable: null };
      throw error;
    }
  },
});
