import { type APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#lib/config/defaults';

export type CacheFlush = { authorizerCacheFlushed: true } | { authorizerCacheFlushed: false; reason: string };

const stillCached = `the key may still be accepted for up to ${AUTHORIZER_CACHE_TTL_SECONDS} s where an answer is cached`;

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

/** The local gateway's cache lives in its process: nothing outside it can empty it. */
const LOCAL_CACHE_REASON =
  'the local gateway cannot be flushed from here: the key may still be accepted for up to LOCAL_AUTHORIZER_CACHE_TTL seconds (default ' +
  `${AUTHORIZER_CACHE_TTL_SECONDS}); restart npm start, or run it with LOCAL_AUTHORIZER_CACHE_TTL=0`;

export const noCacheToFlush = (reason: 'local' | 'no-rest-api-id'): CacheFlush => ({
  authorizerCacheFlushed: false,
  reason: reason === 'local' ? LOCAL_CACHE_REASON : `REST_API_ID is not set: ${stillCached}`,
});
