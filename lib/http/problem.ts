import { STATUS_CODES } from 'node:http';

/**
 * An error that becomes an RFC 9457 problem-details response. Every failure that is not a
 * validation result is one of these, so clients parse a single error shape everywhere.
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

/** A body that failed JSON Schema validation; rendered as the spec's Validation result. */
export class ValidationFailed extends Error {
  constructor(readonly errors: string[]) {
    super('Validation failed');
    this.name = 'ValidationFailed';
  }
}

export const badRequest = (detail: string, extensions?: Record<string, unknown>) =>
  new HttpProblem(400, detail, extensions);
export const unauthorized = (detail = 'A valid x-api-key header is required.') => new HttpProblem(401, detail);
export const notFound = (what: string) => new HttpProblem(404, `${what} was not found.`);
export const conflict = (detail: string) => new HttpProblem(409, detail);
export const preconditionFailed = (detail: string) => new HttpProblem(412, detail);
export const payloadTooLarge = (limitBytes: number) =>
  new HttpProblem(413, `The request body exceeds the limit of ${limitBytes} bytes.`, { limitBytes });
export const unsupportedMediaType = (expected: string[]) =>
  new HttpProblem(415, `Content-Type must be one of: ${expected.join(', ')}.`, { accepted: expected });
