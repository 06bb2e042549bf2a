// Not `import … from 'node:http'`: Node builds that ESM facade by reading every export, whose lazy
// getters (WebSocket & co.) load undici, about 45 ms of a cold start (docs/performance.md).
const { STATUS_CODES } = process.getBuiltinModule('node:http');

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
/** What a client learns of a failure that is ours: nothing but that it was logged. */
export const UNEXPECTED_ERROR = 'An unexpected error occurred. It has been logged.';

/**
 * Middy's error contract (`createError` of @middy/util, `http-errors` before it): a `statusCode`, and
 * `expose` saying whether the message is meant for the client (by default, below 500). Any official
 * middleware refuses a request this way; its `cause` carries the input, so only the message is used.
 */
interface MiddyHttpError extends Error {
  statusCode: number;
  expose?: boolean;
}

const isMiddyHttpError = (error: unknown): error is MiddyHttpError => {
  const statusCode = (error as { statusCode?: unknown } | undefined)?.statusCode;
  return (
    error instanceof Error && Number.isInteger(statusCode) && Number(statusCode) >= 400 && Number(statusCode) <= 599
  );
};

/** A Middy HttpError as problem details: its status, and its message only where it may be exposed. */
export const problemOfHttpError = (error: unknown): HttpProblem | undefined => {
  if (!isMiddyHttpError(error)) return undefined;
  const { statusCode, expose = statusCode < 500 } = error;
  if (expose) return new HttpProblem(statusCode, error.message);
  return new HttpProblem(statusCode, statusCode >= 500 ? UNEXPECTED_ERROR : (STATUS_CODES[statusCode] ?? 'Error'));
};
