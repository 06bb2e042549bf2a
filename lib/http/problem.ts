import { STATUS_CODES } from 'node:http';

/**
 * An error that becomes an RFC 9457 problem-details response: the failures of HTTP itself
 * (credentials, media types, body size and syntax, path parameters). The domain's own failures
 * (lib/errors.ts) become one through domain-errors.ts, so clients parse a single error shape.
 */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'HttpProblem';
  }

  get title(): string {
    return STATUS_CODES[this.status] ?? 'Error';
  }
}

export const badRequest = (detail: string, extensions?: Record<string, unknown>) =>
  new HttpProblem(400, detail, extensions);
export const unauthorized = (detail = 'A valid x-api-key header is required.') => new HttpProblem(401, detail);
export const payloadTooLarge = (limitBytes: number) =>
  new HttpProblem(413, `The request body exceeds the limit of ${limitBytes} bytes.`, { limitBytes });
export const unsupportedMediaType = (expected: string[]) =>
  new HttpProblem(415, `Content-Type must be one of: ${expected.join(', ')}.`, { accepted: expected });
