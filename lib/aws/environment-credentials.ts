import { ENV_KEY, ENV_SECRET, fromEnv } from '@aws-sdk/credential-provider-env';
import type { DefaultProviderInit } from '@aws-sdk/credential-provider-node';
import { CredentialsProviderError } from '@smithy/core/config';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { environment } from '#lib/config/environment';

/*
 * The credential provider of the deployed bundles: esbuild aliases `@aws-sdk/credential-provider-node`
 * (the SDK's default chain, which every client's runtimeConfig imports) to this module (BUNDLING in
 * infra/constructs/service-function.ts). Lambda hands a function its role's credentials in the
 * environment, so the chain's other links (SSO, ini files, credential_process, web identity, IMDS,
 * with the STS and SSO clients they bundle) never run there and only cost cold start. Code run from
 * source (tsx, vitest, `npm run admin`) is not aliased and keeps the full chain: profiles and SSO.
 */

/**
 * The default chain's signature (clients call it with their own config): the credentials of
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, when set, AWS_SESSION_TOKEN. The SDK memoizes the
 * provider per client, as it does the chain's.
 */
export const defaultProvider = (init: DefaultProviderInit = {}): AwsCredentialIdentityProvider => {
  const fromEnvironment = fromEnv(init);
  return async () => {
    const missing = [ENV_KEY, ENV_SECRET].filter((name) => !environment()[name]);
    if (missing.length > 0) {
      throw new CredentialsProviderError(
        `No AWS credentials in the environment: ${missing.join(' and ')} not set (deployed bundles read credentials from the environment only).`,
        { logger: init.logger, tryNextLink: false },
      );
    }
    return fromEnvironment();
  };
};
