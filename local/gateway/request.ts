import type { IncomingMessage } from 'node:http';
import type { RouteRow } from '#lib/routes/route-table';

/* Reading a request as API Gateway does: its route, its target, its headers and query, its body. */

export interface CompiledRoute {
  route: RouteRow;
  pattern: RegExp;
  names: string[];
  staticSegments: number;
}

export const compile = (route: RouteRow): CompiledRoute => {
  const names: string[] = [];
  const segments = route.path.split('/').slice(1);
  const source = segments
    .map((segment) => {
      const variable = /^\{(\w+)\}$/.exec(segment);
      if (!variable) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(variable[1]!);
      return '([^/]+)';
    })
    .join('/');
  return { route, pattern: new RegExp(`^/${source}/?$`), names, staticSegments: segments.length - names.length };
};

export const readBody = (req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });

/** A prototype-free map: client-chosen names (`__proto__`, `constructor`) stay data, never Object.prototype's. */
export const dictionary = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/**
 * The request target, or undefined when API Gateway would refuse it. API Gateway answers 400 to a
 * path or query string whose percent-encoding is malformed (`%ZZ`, a lone `%`) before authorizing
 * or routing, where most web servers pass it on; invalid UTF-8 (overlong `%C0%AF`, surrogate
 * `%ED%A0%80`) is refused alike rather than guessed at. decodeURIComponent is that strict decoder,
 * and an escape never spans a `/`, `&` or `=`, so decoding the whole path and the whole query
 * checks every segment, name and value.
 */
export const requestTarget = (raw = '/'): URL | undefined => {
  try {
    // Origin-form is taken verbatim ("//x" is a path, not a host); absolute-form is parsed as a URL.
    const url = raw.startsWith('/') ? new URL(`http://localhost${raw}`) : new URL(raw);
    decodeURIComponent(url.pathname);
    decodeURIComponent(url.search);
    return url;
  } catch {
    return undefined;
  }
};

/** API Gateway's pair of maps: the last value of each name, and every value in order. */
export const collect = (pairs: Iterable<[string, string]>) => {
  const last = dictionary<string>();
  const all = dictionary<string[]>();
  for (const [name, value] of pairs) {
    last[name] = value;
    const values = all[name] ?? [];
    values.push(value);
    all[name] = values;
  }
  return { last, all };
};

export function* headerPairs(rawHeaders: string[]): Generator<[string, string]> {
  for (let i = 0; i < rawHeaders.length; i += 2) yield [rawHeaders[i]!, rawHeaders[i + 1]!];
}

/** A header's last value, whatever the case of its name. */
export const headerOf = (headers: Record<string, string>, name: string): string | undefined =>
  headers[Object.keys(headers).find((h) => h.toLowerCase() === name) ?? ''];
