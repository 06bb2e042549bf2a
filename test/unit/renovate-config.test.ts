import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { ensureVendoredFile, type VendoredFile } from '#scripts/vendored-file';

const root = new URL('../../', import.meta.url);
const readJson = (path: string) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));

interface PackageRule {
  groupName?: string;
  matchPackageNames?: string[];
  [option: string]: unknown;
}
const config = readJson('renovate.json') as { packageRules: PackageRule[]; [option: string]: unknown };
const manifest = readJson('package.json') as Record<'dependencies' | 'devDependencies', Record<string, string>>;
const dependencies = { ...manifest.dependencies, ...manifest.devDependencies };

/** Renovate's own schema, of the version pinned here, out of its npm tarball (as the reference page's script). */
const RENOVATE_SCHEMA: VendoredFile = {
  spec: 'renovate@44.121.2',
  integrity: 'sha512-gNsY+POw2UN3B4e8x0B5UK3onH1qF7wMirKGaUnJcSx3+xEWH4n35RS4rvVEtTIIV/BoZoFbsIo7njTb9Mydxg==',
  path: 'package/renovate-schema.json',
  sha256: '989a29d9d8f1c421436b68de9472898283b55db6c5cf98fb243489e40e338a02',
};
/** Kept in the system's temporary directory, by digest: outside the tree, so the linter never reads it. */
const renovateSchema = async () => {
  const target = join(tmpdir(), `renovate-schema-${RENOVATE_SCHEMA.sha256.slice(0, 16)}.json`);
  await ensureVendoredFile(RENOVATE_SCHEMA, target);
  return JSON.parse(readFileSync(target, 'utf8'));
};

/** The two forms the config uses: an exact name, or `@scope/**` (every package of the scope). */
const matches = (pattern: string, name: string) => {
  if (pattern.endsWith('/**')) return name.startsWith(pattern.slice(0, -2));
  expect(pattern, 'a pattern this test does not read').toMatch(/^[@a-z0-9/._-]+$/);
  return pattern === name;
};
const ruleOf = (name: string) =>
  config.packageRules.filter((rule) => rule.groupName && rule.matchPackageNames?.some((p) => matches(p, name)));

/** The families the issue asked to update together, by how their packages are named. */
const families: Record<string, (name: string) => boolean> = {
  'AWS SDK': (name) => name.startsWith('@aws-sdk/') || name.startsWith('@smithy/'),
  Powertools: (name) => name.startsWith('@aws-lambda-powertools/'),
  Middy: (name) => name.startsWith('@middy/'),
  CDK: (name) => ['aws-cdk', 'aws-cdk-lib', 'constructs', 'cdk-nag'].includes(name),
  StrykerJS: (name) => name.startsWith('@stryker-mutator/') || name.startsWith('mutation-testing-'),
};

describe('the Renovate configuration (renovate.json)', () => {
  it("is valid for Renovate's schema, every option one it knows (the schema lets unknown ones through)", async () => {
    const schema = await renovateSchema();
    const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
    expect(validate(config) ? [] : validate.errors).toEqual([]);
    // `$schema` is for editors; Renovate ignores it.
    expect(Object.keys(config).filter((option) => option !== '$schema' && !(option in schema.properties))).toEqual([]);
    // A rule takes its own options (match…) and most of the top level's (groupName, schedule…).
    const ruleOptions = { ...schema.properties, ...schema.definitions.packageRules.items.allOf[0].properties };
    for (const rule of config.packageRules) {
      expect(Object.keys(rule).filter((option) => !(option in ruleOptions))).toEqual([]);
    }
    // The check above can fail: a misspelt option is caught.
    expect('matchPackageName' in ruleOptions).toBe(false);
  }, 60_000);

  it('keeps exact pins, on a schedule', () => {
    expect(config.rangeStrategy).toBe('pin');
    expect(config.schedule).toEqual([expect.stringMatching(/\S/)]);
    // What "pin" keeps: every dependency at one exact version.
    for (const [name, version] of Object.entries(dependencies)) expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('groups each family: every one of its dependencies in its group and in no other', () => {
    for (const [group, isMember] of Object.entries(families)) {
      const members = Object.keys(dependencies).filter(isMember);
      expect(members.length, group).toBeGreaterThan(0);
      for (const name of members) expect(ruleOf(name).map((rule) => rule.groupName)).toEqual([group]);
    }
    // And nothing else is swept into those groups.
    const others = Object.keys(dependencies).filter((name) => !Object.values(families).some((is) => is(name)));
    for (const name of others) {
      expect(
        ruleOf(name).filter((rule) => rule.groupName! in families),
        name,
      ).toEqual([]);
    }
  });
});
