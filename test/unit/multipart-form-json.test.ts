import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MultipartForm } from '#lib/http/multipart-form';

/** MultipartForm.toJSON: what idempotent retries compare of a form (lib/http/idempotency.ts). */
describe('MultipartForm as JSON', () => {
  const bytes = Buffer.from('%PDF-1.7\n binary \u0000 bytes');
  const form = (content = bytes, description = 'knee') =>
    new MultipartForm(
      [{ field: 'file', fileName: 'scan.pdf', mediaType: 'application/pdf', bytes: content }],
      new Map([
        ['description', [description]],
        ['tag', ['a', 'b']],
      ]),
    );

  it('gives every field value and each file’s name, type, size and SHA-256, never its bytes', () => {
    expect(JSON.parse(JSON.stringify(form()))).toEqual({
      fields: { description: ['knee'], tag: ['a', 'b'] },
      files: [
        {
          field: 'file',
          fileName: 'scan.pdf',
          mediaType: 'application/pdf',
          size: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
        },
      ],
    });
    expect(JSON.stringify(form())).not.toContain('binary');
  });

  it('changes with any byte of a file or any field value, and with nothing else', () => {
    const text = JSON.stringify(form());
    expect(JSON.stringify(form(Buffer.from(bytes)))).toBe(text);
    expect(JSON.stringify(form(Buffer.concat([bytes.subarray(0, -1), Buffer.from('t')])))).not.toBe(text);
    expect(JSON.stringify(form(bytes, 'elbow'))).not.toBe(text);
  });

  it('keeps a file without a name or type apart from one with them', () => {
    const bare = new MultipartForm(
      [{ field: 'file', fileName: undefined, mediaType: undefined, bytes }],
      new Map(),
    ).toJSON();
    expect(bare.files[0]).toMatchObject({ fileName: null, mediaType: null });
  });
});
