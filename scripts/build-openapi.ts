/**
 * Build step: writes the OpenAPI document (lib/openapi/document.ts) from the route table and the
 * schema sources to lib/openapi/generated/openapi.json, which its route ships beside its bundle; and
 * puts the reference page's renderer beside it (scripts/api-reference-script.ts).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '#lib/openapi/document';
import { OPENAPI_DOCUMENT, routes } from '#lib/routes/route-table';
import { schemaSources } from '#lib/validation/schema-sources';
import { ensureApiReferenceScript } from './api-reference-script.ts';

const outDir = new URL('../lib/openapi/generated/', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const document = buildOpenApiDocument({ routes, schemaSources, version });

mkdirSync(outDir, { recursive: true });
writeFileSync(new URL(OPENAPI_DOCUMENT, outDir), `${JSON.stringify(document)}\n`);
process.stdout.write(
  `wrote the OpenAPI document (${Object.keys(document.paths as object).length} paths) to lib/openapi/generated/\n`,
);
process.stdout.write(await ensureApiReferenceScript());
