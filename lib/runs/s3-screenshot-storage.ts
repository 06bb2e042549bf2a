import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { s3 } from '#lib/aws/s3';
import { bucketName } from '#lib/config/resources';
import type { ScreenshotStorage } from './screenshot-storage.ts';

/**
 * Screenshots in the attachments bucket (private, SSE-KMS by default encryption), under
 * `<clientId>/rpa/<runId>/<n>.png`. Presigned URLs carry ids only in their path.
 */
export const s3ScreenshotStorage: ScreenshotStorage = {
  put: async (key, png) => {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucketName(),
        Key: key,
        Body: png,
        ContentType: 'image/png',
        ContentLength: png.length,
      }),
    );
  },

  presignGet: async (key, expiresInSeconds) => {
    const url = await getSignedUrl(
      s3,
      new GetObjectCommand({
        Bucket: bucketName(),
        Key: key,
        ResponseContentType: 'image/png',
        ResponseCacheControl: 'no-store',
      }),
      { expiresIn: expiresInSeconds },
    );
    return { url, expiresAt: new Date(Date.now() + expiresInSeconds * 1000).toISOString() };
  },
};
