import type { IncomingMessage } from 'node:http';

/** What the portal's pages and the operator's both read: a cookie, a form post, a refusal with its status. */
const MAX_BODY_BYTES = 64 * 1024;

/** A refusal the server answers with `status` and `message` on an error page. */
export class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const cookieOf = (req: IncomingMessage, name: string) => {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
};

/** A url-encoded form of at most 64 KiB (415 for another type, 413 past it); the first of a repeated name. */
export const readForm = (req: IncomingMessage): Promise<Record<string, string>> =>
  new Promise((resolve, reject) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') {
      reject(new BadRequest(415, 'Forms are sent as application/x-www-form-urlencoded.'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) {
        reject(new BadRequest(413, 'The form is too large.'));
        return;
      }
      const form: Record<string, string> = {};
      for (const [name, value] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) {
        if (!(name in form)) form[name] = value;
      }
      resolve(form);
    });
    req.on('error', reject);
  });
