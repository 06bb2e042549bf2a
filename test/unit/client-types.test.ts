import { describe, expect, it } from 'vitest';
import { clientTypes } from '#scripts/client-types';

/** A document with what openapi-typescript types badly on its own: files, and "one of these is required". */
const documentWith = (schemas: Record<string, object>) =>
  JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'client types', version: '1' },
    paths: {},
    components: { schemas },
  });

/** The generated source, without JSDoc and with blanks collapsed: one line to search. */
const flat = (source: string) =>
  source
    .replace(/\/\*\*[\s\S]*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .trim();

describe('the client types (scripts/client-types.ts)', () => {
  it('types a file (contentMediaType or format: binary) as a Blob, a nullable one as Blob | null', async () => {
    const source = await clientTypes(
      documentWith({
        Upload: {
          type: 'object',
          required: ['file'],
          properties: {
            file: { type: 'string', contentMediaType: 'application/octet-stream' },
            legacy: { type: 'string', format: 'binary' },
            maybe: { type: ['string', 'null'], contentMediaType: 'application/pdf' },
            name: { type: 'string' },
          },
        },
      }),
    );
    expect(flat(source)).toContain('Upload: { file: Blob; legacy?: Blob; maybe?: Blob | null; name?: string; };');
  });

  it('types anyOf of required-only members as the object with each of them required, not unknown', async () => {
    const provider = {
      type: 'object',
      additionalProperties: false,
      required: ['roleCode'],
      properties: { roleCode: { type: 'string' }, npi: { type: 'string' }, lastName: { type: 'string' } },
      anyOf: [{ required: ['npi'] }, { required: ['lastName'] }],
    };
    const source = await clientTypes(
      documentWith({ Provider: provider, Providers: { type: 'array', items: structuredClone(provider) } }),
    );
    const object = '{ roleCode: string; npi?: string; lastName?: string; }';
    const alternatives = `WithRequired<${object}, "npi"> | WithRequired<${object}, "lastName">`;
    expect(flat(source)).toContain(`Provider: ${alternatives}; Providers: (${alternatives})[];`);
    expect(source).not.toContain('unknown');
    expect(flat(source)).toContain('type WithRequired<T, K extends keyof T> = T & { [P in K]-?: T[P]; };');
  });
});
