import { readFileSync } from 'node:fs';

/**
 * Real code sets (X12, CMS, NUBC) kept as data beside this file: `code<TAB>description` a line.
 * Read at build time only, when the schemas are compiled; handlers never open these files.
 */
export type CodeSetName =
  | 'admission-type'
  | 'certification-type'
  | 'level-of-service'
  | 'place-of-service'
  | 'provider-role'
  | 'request-category'
  | 'service-type';

export interface Code {
  code: string;
  description: string;
}

export const readCodeSet = (name: CodeSetName): Code[] =>
  readFileSync(new URL(`./code-sets/${name}.tsv`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [code, description] = line.split('\t');
      if (!code || !description) throw new Error(`Malformed line in code set ${name}: ${line}`);
      return { code: code.trim(), description: description.trim() };
    });

export const codesOf = (name: CodeSetName): string[] => readCodeSet(name).map(({ code }) => code);
