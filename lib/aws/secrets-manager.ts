import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { traced } from '#lib/observability/tracer';

/** Module-scope Secrets Manager client (the cursor signing key). */
export const secretsManager = traced(new SecretsManagerClient({}));
