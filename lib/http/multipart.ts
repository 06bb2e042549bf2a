import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { BodyParser } from './endpoint.ts';
import type { MultipartLimits } from './multipart-form.ts';
import { payloadTooLarge, unsupportedMediaType } from './problem.ts';
import { bodyBytesOf, mediaTypeOf } from './request-body.ts';

const MULTIPART_MEDIA_TYPE = 'multipart/form-data';

/**
 * endpoint()'s `multipart` option: multipart/form-data (base64 from API Gateway's binary media
 * types) → MultipartForm (multipart-form.ts), read by @middy/http-multipart-body-parser with its limits
 * checked around it (multipart-parse.ts); any other media type goes to the JSON parser when the route takes JSON too. Passed in by the
 * routes that take forms, so the JSON functions bundle none of this (docs/performance.md).
 */
export const multipartBody = (limits: MultipartLimits): BodyParser => ({
  mediaType: MULTIPART_MEDIA_TYPE,
  middleware: (otherwise) => ({
    before: async (request) => {
      const event = request.event as unknown as APIGatewayProxyEvent;
      const contentType = event.headers?.['content-type'];
      if (mediaTypeOf(contentType) !== MULTIPART_MEDIA_TYPE) {
        if (!otherwise?.before) throw unsupportedMediaType([MULTIPART_MEDIA_TYPE]);
        await otherwise.before(request);
        return;
      }
      const bytes = bodyBytesOf(event);
      if (bytes.length > limits.maxBytes) throw payloadTooLarge(limits.maxBytes);
      // Loaded on the first form, not at import: Middy's parser and busboy are no part of a JSON cold start.
      const { parseMultipart } = await import('./multipart-parse.ts');
      request.event.body = await parseMultipart(bytes, contentType!, limits);
    },
  }),
});
