import type { APIGatewayProxyEvent } from 'aws-lambda';

/** The media type of a Content-Type header, lowercased, without parameters ('' when absent). */
export const mediaTypeOf = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase() ?? '';

/** The body as sent: API Gateway base64-encodes binary media types. */
export const bodyBytesOf = (event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>): Buffer => {
  const raw = event.body ?? '';
  return event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
};
