import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** Module-scope Secrets Manager client (the cursor signing key). */
export const secretsManager = new SecretsManagerClient({});
