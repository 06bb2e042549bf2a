import { S3Client } from '@aws-sdk/client-s3';
import { s3ForcePathStyle } from '#lib/config/settings';
import { traced } from '#lib/observability/tracer';

/** Module-scope S3 client. S3_FORCE_PATH_STYLE is set where the endpoint cannot serve virtual-hosted buckets (s3rver). */
export const s3 = traced(new S3Client({ forcePathStyle: s3ForcePathStyle() }));
