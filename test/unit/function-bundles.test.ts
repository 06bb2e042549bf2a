import { SourceMap } from 'node:module';
import { describe, expect, it } from 'vitest';
import { bundleFunction, type FunctionBundle, ownerOf } from '../../bench/function-bundle.ts';

/*
 * What a function's bundle (built as CDK builds it) holds: only the compiled validators its route
 * names, multipart parsing only where a route takes forms (and loaded on the first form), no X-Ray SDK, no browser or Encryption SDK in the
 * recorders, no Encryption SDK in the browser workers, no scraper token key or S3 in the RPA routes that read or
 * start runs; the SDK's credential chain replaced by the environment's, and no ESM import of node:http (static
 * or dynamic: lib/aws/node-http.ts).
 * Contents, not sizes: bench:bundles measures those. A deployed bundle run against the stack:
 * test/integration/deployed-bundle.test.ts.
 */
const inputsOf = async (handler: string) => Object.keys((await bundleFunction(handler)).inputs);
const validatorsIn = (inputs: string[]) =>
  inputs.filter((input) => input.startsWith('lib/validation/generated/')).sort();
const multipartIn = (inputs: string[]) =>
  inputs.filter((input) =>
    /lib\/http\/multipart(?:-parse)?\.ts|http-multipart-body-parser|@fastify\/busboy/.test(input),
  );

/**
 * The packages (or project folders) of the static ESM imports of node:http in a bundle, found in its
 * code and traced to their source through its source map: each makes Node build that module's ESM
 * facade, which reads its lazy getters and so loads undici (docs/performance.md).
 */
const esmImportersOfHttp = ({ code, sourceMap }: FunctionBundle) => {
  const map = new SourceMap(JSON.parse(sourceMap));
  return code.split('\n').flatMap((line, lineNumber) =>
    [...line.matchAll(/\b(?:import|export)\s*(?:[^;"'()]*?\bfrom\s*)?["'](?:node:)?http["']/g)].map((found) => {
      const entry = map.findEntry(lineNumber, found.index);
      return 'originalSource' in entry
        ? ownerOf(entry.originalSource)
        : `index.mjs:${lineNumber + 1}:${found.index + 1}`;
    }),
  );
};
/** The inputs a bundle's entry reaches through static imports alone (not through an `import()`), from its metafile. */
const staticallyImported = ({ metafile }: FunctionBundle, entry: string) => {
  const reached = new Set([entry]);
  for (const input of reached) {
    for (const imported of metafile.inputs[input]?.imports ?? []) {
      if (imported.kind !== 'dynamic-import' && !imported.external) reached.add(imported.path);
    }
  }
  return [...reached];
};

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

  it('the route that takes forms loads the multipart parser on the first form, not at import', async () => {
    const bundle = await bundleFunction('attachments/create-attachment');
    const atImport = staticallyImported(bundle, 'functions/attachments/create-attachment.ts');
    expect(atImport).toContain('lib/http/multipart.ts');
    expect(multipartIn(Object.keys(bundle.inputs)).filter((input) => !atImport.includes(input))).toEqual(
      expect.arrayContaining([
        'lib/http/multipart-parse.ts',
        expect.stringContaining('http-multipart-body-parser'),
        expect.stringContaining('@fastify/busboy'),
      ]),
    );
    expect(atImport.filter((input) => /http-multipart-body-parser|@fastify\/busboy/.test(input))).toEqual([]);
  });

  it("takes node:http from Node's CommonJS loader where a dependency imports it as ESM (lib/aws/node-http.ts)", async () => {
    // Middy's multipart parser calls @middy/util's createError, which imports STATUS_CODES from node:http.
    const bundle = await bundleFunction('attachments/create-attachment');
    expect(Object.keys(bundle.inputs)).toContain('lib/aws/node-http.ts');
    expect(esmImportersOfHttp(bundle)).toEqual([]);
    expect(bundle.code).not.toMatch(/\bimport\(\s*["'](?:node:)?http["']\s*\)/);
  });

  it.each(['rpa/finish-batch', 'rpa/record-execution-ended', 'rpa/get-rpa-run'])(
    '%s (a recorder, or a read that fails a run left unended) bundles no browser and no Encryption SDK',
    async (handler) => {
      const inputs = await inputsOf(handler);
      expect(inputs).toContain('lib/runs/execution-ended.ts');
      expect(inputs.filter((input) => /playwright-core|@sparticuz|@aws-crypto/.test(input))).toEqual([]);
    },
  );

  it.each(['rpa/get-rpa-run', 'rpa/get-check-auth-status', 'rpa/start-view-on-page', 'rpa/start-check-auth-status'])(
    "%s (reads or starts runs) bundles no scraper token key (jose, its Secrets Manager key's module) and no S3",
    async (handler) => {
      const inputs = await inputsOf(handler);
      expect(inputs).toContain('lib/runs/sfn-automation-starter.ts');
      expect(
        inputs.filter((input) =>
          /\/jose\/|@aws-sdk\/client-s3\/|s3-request-presigner|lib\/rpa\/scraper-token\.ts|lib\/aws\/s3\.ts/.test(
            input,
          ),
        ),
      ).toEqual([]);
    },
  );

  it('the reads of runs bundle no Secrets Manager either (the start routes sign idempotency fingerprints)', async () => {
    const inputs = await inputsOf('rpa/get-rpa-run');
    expect(inputs.filter((input) => /client-secrets-manager/.test(input))).toEqual([]);
  });

  it.each(['rpa/issue-rpa-access-token', 'rpa/get-scraper-session'])(
    '%s (the scraper token and session) bundles no Step Functions client',
    async (handler) => {
      const inputs = await inputsOf(handler);
      expect(inputs).toContain('lib/runs/scraper-token.ts');
      expect(inputs.filter((input) => /client-sfn|lib\/rpa\/sfn-automation-starter\.ts/.test(input))).toEqual([]);
    },
  );

  it('the token route bundles no S3 client or presigner (only the session links screenshots)', async () => {
    const inputs = await inputsOf('rpa/issue-rpa-access-token');
    expect(inputs.filter((input) => /@aws-sdk\/client-s3\/|s3-request-presigner|lib\/aws\/s3\.ts/.test(input))).toEqual(
      [],
    );
  });

  it('the browser workers bundle no Encryption SDK (they ask the run credentials function); it bundles no browser', async () => {
    const browser = ['@sparticuz/chromium', 'playwright-core'];
    const worker = Object.keys((await bundleFunction('rpa/fill-portal-form', browser)).inputs);
    expect(worker.filter((input) => /@aws-crypto|lib\/crypto\//.test(input))).toEqual([]);
    expect(worker).toContain('lib/portal/lambda-credentials-source.ts');
    const credentials = await inputsOf('rpa/issue-run-credentials');
    expect(credentials.filter((input) => /playwright-core|@sparticuz|lib\/rpa\/(browser|drivers)/.test(input))).toEqual(
      [],
    );
    expect(credentials).toContain('lib/crypto/open.ts');
    expect(credentials.filter((input) => /@aws-crypto\/encrypt-node/.test(input))).toEqual([]);
  });

  it.each(['requests/get-request', 'requests/create-request'])(
    '%s reads credentials from the environment and imports node:http without ESM',
    async (handler) => {
      const bundle = await bundleFunction(handler);
      const inputs = Object.keys(bundle.inputs);
      expect(inputs).toContain('lib/aws/environment-credentials.ts');
      expect(
        inputs.filter((input) => /@aws-sdk\/(?:nested-clients|credential-provider-(?!env\/))/.test(input)),
      ).toEqual([]);
      expect(esmImportersOfHttp(bundle)).toEqual([]);
    },
  );
});
