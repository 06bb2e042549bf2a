import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindPayerAssertionSigning } from '#infra/constructs/payer-assertion-signing';
import { ServiceRole } from '#infra/constructs/service-function';
import { addComplianceChecks } from '#infra/service-review-app';

/*
 * The helper on a stand-alone stack, under the app's cdk-nag checks: two functions' roles, one bound. Only
 * that one may sign, and only with keys tagged for payer assertions; no role may create or delete keys.
 */
type Statement = { Action: string | string[]; Resource: unknown; Condition?: Record<string, Record<string, unknown>> };
type Resource = { Type: string; Properties: Record<string, any> };

let outdir: string;
let resources: Record<string, Resource>;
let signerRoleId: string;

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'payer-signing-'));
  const app = new App({ outdir });
  addComplianceChecks(app);
  const stack = new Stack(app, 'PayerSigning');
  const unscoped = { actions: ['xray:PutTraceSegments'], reason: 'X-Ray has no resource-level permissions.' };
  const signer = { role: new ServiceRole(stack, 'SignerRole', { unscoped }) };
  const other = new ServiceRole(stack, 'OtherRole', { unscoped });
  // The other function's own grant: a read of one table, as a route's.
  other.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [`arn:aws:dynamodb:${stack.region}:1:table/t`] }),
  );
  bindPayerAssertionSigning(signer);
  // Throws on any finding cdk-nag reports that nobody acknowledged.
  const template = app.synth().getStackByName(stack.stackName).template as { Resources: Record<string, Resource> };
  resources = template.Resources;
  signerRoleId = stack.getLogicalId(signer.role.node.defaultChild as never);
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const actionsOf = (statement: Statement) => [statement.Action].flat();

/** Every statement of the template's policies, with the roles it applies to. */
const statements = () =>
  Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::IAM::ManagedPolicy' || resource.Type === 'AWS::IAM::Policy')
    .flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as Statement[]).map((statement) => ({
        statement,
        roles: (policy.Properties.Roles as Array<{ Ref: string }>).map((role) => role.Ref),
      })),
    );

describe('bindPayerAssertionSigning', () => {
  it('gives kms:Sign to the one bound role, and to no other', () => {
    const signing = statements().filter(({ statement }) => actionsOf(statement).some((action) => /^kms:/.test(action)));
    expect(signing.flatMap(({ roles }) => roles)).toEqual([signerRoleId, signerRoleId]);
    expect(signing.map(({ statement }) => actionsOf(statement))).toEqual([['kms:Sign'], ['kms:GetPublicKey']]);
  });

  it('only on keys tagged for payer assertions, Sign only with RS384 over raw messages', () => {
    const [sign, getPublicKey] = statements()
      .map(({ statement }) => statement)
      .filter((statement) => actionsOf(statement).some((action) => /^kms:/.test(action)));
    expect(JSON.stringify(sign!.Resource)).toMatch(/:kms:.*:key\/\*"\]\]\}$/);
    expect(sign!.Condition).toEqual({
      StringEquals: {
        'aws:ResourceTag/service-review:purpose': 'payer-assertion-signing',
        'kms:SigningAlgorithm': 'RSASSA_PKCS1_V1_5_SHA_384',
        'kms:MessageType': 'RAW',
      },
    });
    expect(getPublicKey!.Condition).toEqual({
      StringEquals: { 'aws:ResourceTag/service-review:purpose': 'payer-assertion-signing' },
    });
  });

  it('lets no role create, delete or tag keys: those are the operator’s', () => {
    const actions = statements().flatMap(({ statement }) => actionsOf(statement));
    expect(
      actions.filter((action) => /^kms:(Create|Schedule|Tag|Untag|Put|\*)/.test(action) || action === '*'),
    ).toEqual([]);
  });
});
