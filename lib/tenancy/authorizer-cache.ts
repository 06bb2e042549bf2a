import { type APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';

/** How long API Gateway reuses an authorizer answer (AUTHORIZER_CACHE_TTL in infra/constructs/service-api.ts). */
export const AUTHORIZER_CACHE_SECONDS = 60;

export type CacheFlush = { authorizerCacheFlushed: true } | { authorizerCacheFlushed: false; reason: string };

const stillCached = `the key may still be accepted for up to ${AUTHORIZER_CACHE_SECONDS} s where an answer is cached`;

/**
 * After a revocation: empties the stage's authorizer cache so the key stops working now rather than
 * within the cache's lifetime. The revocation stands whatever happens here; a failed flush is
 * reported, not thrown.
 */
export const flushAuthorizerCache = async (
  client: Pick<APIGatewayClient, 'send'>,
  stage: { restApiId: string; stageName: string },
): Promise<CacheFlush> => {
  try {
    await client.send(
      new FlushStageAuthorizersCacheCommand({ restApiId: stage.restApiId, stageName: stage.stageName }),
    );
    return { authorizerCacheFlushed: true };
  } catch (error) {
    return { authorizerCacheFlushed: false, reason: `flush failed (${(error as Error).name}): ${stillCached}` };
  }
};

export const noCacheToFlush = (reason: 'local' | 'no-rest-api-id'): CacheFlush => ({
  authorizerCacheFlushed: false,
  reason: reason === 'local' ? 'local stack has no authorizer cache' : `REST_API_ID is not set: ${stillCached}`,
});
