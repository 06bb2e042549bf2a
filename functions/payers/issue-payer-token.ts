import { observed } from '#lib/observability/invocation';
import { payerTokens } from '#lib/payer-api/payer-token-service';

/**
 * IssuePayerToken: invoked by the PAS tasks with ids only, `{clientId, payerConnectionId, refresh}`;
 * answers the connection's payer access token (cached while it is valid; `refresh` asks a new one), or
 * `{refused}` when the payer's token endpoint refuses our client assertion. The one function that signs
 * assertions (docs/payer-api.md, "Signing keys").
 */
export const handler = observed('IssuePayerToken', (input: unknown) => payerTokens.issue(input));
