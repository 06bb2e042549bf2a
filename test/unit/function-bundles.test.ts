import { describe, expect, it } from 'vitest';
import { bundleFunction } from '../../bench/function-bundle.ts';

/*
 * What a function's bundle (built as CDK builds it) holds: only the compiled validators its route
 * names, multipart parsing only where a route takes forms, no X-Ray SDK, and no browser or Encryption SDK in the
 * recorders. Contents, not sizes: bench:bundles measures those.
 */
const inputsOf = async (handler: string) => Object.keys((await bundleFunction(handler)).inputs);
const validatorsIn = (inputs: string[]) =>
  inputs.filter((input) => input.startsWith('lib/validation/generated/')).sort();
const multipartIn = (inputs: string[]) =>
  inputs.filter((input) => /lib\/http\/multipart\.ts|http-multipart-body-parser|@fastify\/busboy/.test(input));

describe('function bundles', () => {
  it('a route that validates no body bundles no validator and no multipart parser', async () => {
    const inputs = await inputsOf('requests/get-request');
    expect(validatorsIn(inputs)).toEqual([]);
    expect(multipartIn(inputs)).toEqual([]);
  });

  it('traces its SDK calls without the X-Ray SDK (lib/observability/tracer.ts)', async () => {
    const inputs = await inputsOf('requests/get-request');
    expect(inputs).toContain('lib/observability/xray.ts');
    expect(inputs.filter((input) => /aws-xray-sdk|cls-hooked|powertools\/tracer|\/semver\//.test(input))).toEqual([]);
  });

  it("a JSON route bundles its own schema's validator only", async () => {
    const inputs = await inputsOf('requests/create-request');
    expect(validatorsIn(inputs)).toEqual(['lib/validation/generated/per-schema/request.ts']);
    expect(multipartIn(inputs)).toEqual([]);
  });

  it('the route that takes forms bundles the multipart parser and its JSON schema only', async () => {
    const inputs = await inputsOf('attachments/create-attachment');
    expect(validatorsIn(inputs)).toEqual(['lib/validation/generated/per-schema/presigned-upload.ts']);
    expect(multipartIn(inputs)).toContain('lib/http/multipart.ts');
  });

  it('the recorders bundle no browser and no Encryption SDK', async () => {
    const inputs = await inputsOf('rpa/finish-batch');
    expect(inputs.filter((input) => /playwright-core|@sparticuz|@aws-crypto/.test(input))).toEqual([]);
  });
});
