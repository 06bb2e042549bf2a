import type { APIGatewayProxyResult } from 'aws-lambda';

/** Headers on every response: PHI must not be cached by browsers or intermediaries. */
export const baseHeaders: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
};

export type ApiResult = APIGatewayProxyResult & { headers: Record<string, string> };

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResult => ({
  statusCode,
  headers: { ...baseHeaders, 'Content-Type': 'application/json; charset=utf-8', ...headers },
  body: JSON.stringify(body),
});

export const problemJson = (statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResult => ({
  statusCode,
  headers: { ...baseHeaders, 'Content-Type': 'application/problem+json; charset=utf-8', ...headers },
  body: JSON.stringify(body),
});

export const noContent = (headers: Record<string, string> = {}): ApiResult => ({
  statusCode: 204,
  headers: { ...baseHeaders, ...headers },
  body: '',
});
