import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { apiAreaStackId } from '#infra/api-area-stack';
import { addComplianceChecks, buildServiceReviewApp } from '#infra/service-review-app';
import { functionNameOf, routes } from '#lib/routes/route-table';

/** The checks of the real app, on a throwaway app holding one bucket with every default left as is. */
const appWithPlainBucket = () => {
  const outdir = mkdtempSync(join(tmpdir(), 'service-review-nag-'));
  const app = new App({ outdir });
  addComplianceChecks(app);
  const bucket = new Bucket(new Stack(app, 'Throwaway'), 'Plain');
  return { app, bucket, outdir };
};

/** The validation report synthesis fails with, or undefined if it succeeds. */
const synthesisError = (app: App) => {
  try {
    app.synth();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

const outdirs: string[] = [];
afterEach(() => {
  for (const outdir of outdirs.splice(0)) rmSync(outdir, { recursive: true, force: true });
});

describe('cdk-nag', () => {
  it('fails synthesis of the service app on a finding nobody acknowledged', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'service-review-nag-'));
    outdirs.push(outdir);
    const schemasRoute = routes.find((route) => route.handler === 'schemas/list-schemas')!;
    const { app, data, automation, api } = buildServiceReviewApp({
      outdir,
      // No bundling: cdk-nag reads the templates, not the functions' code (and every stack is synthesized).
      context: { 'aws:cdk:bundling-stacks': [] },
      routes: [schemasRoute],
      eventFunctions: [],
    });
    new Bucket(data, 'Plain');
    new Bucket(automation, 'AlsoPlain');
    // A new grant on *, next to the X-Ray actions that may have it: only those are acknowledged.
    const schemasFunction = api.functions[functionNameOf(schemasRoute)]!;
    schemasFunction.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: ['*'] }));
    const report = synthesisError(app);
    expect(report).toMatch(/AwsSolutions-S10/);
    expect(report).toMatch(/HIPAA\.Security-S3BucketSSLRequestsOnly/);
    // Every stack is checked, the automation stack too, and the API's nested stacks (the route's function is in its area's).
    expect(report).toContain('ServiceReviewAutomation/AlsoPlain');
    expect(report).toMatch(/AwsSolutions-IAM5\[Resource::\*\]/);
    const schemasFunctionPath = `ServiceReviewApi/${apiAreaStackId('Schemas')}/${functionNameOf(schemasRoute)}`;
    expect(schemasFunction.node.path).toBe(schemasFunctionPath);
    expect(report).toContain(`${schemasFunctionPath}/Role/Policy`);
    expect(report).not.toContain(`${schemasFunctionPath}/Role/Unscoped`);
  }, 120_000);

  it('fails synthesis of any app it checks, with both packs', () => {
    const { app, outdir } = appWithPlainBucket();
    outdirs.push(outdir);
    const report = synthesisError(app);
    expect(report).toMatch(/AwsSolutions-S1\b/);
    expect(report).toMatch(/HIPAA\.Security-S3BucketLoggingEnabled/);
  });

  it('passes once every finding is acknowledged with a reason', () => {
    const { app, bucket, outdir } = appWithPlainBucket();
    outdirs.push(outdir);
    const findings = [
      'AwsSolutions-S1',
      'AwsSolutions-S10',
      'HIPAA.Security-S3BucketLoggingEnabled',
      'HIPAA.Security-S3BucketPublicReadProhibited',
      'HIPAA.Security-S3BucketPublicWriteProhibited',
      'HIPAA.Security-S3BucketReplicationEnabled',
      'HIPAA.Security-S3BucketSSLRequestsOnly',
      'HIPAA.Security-S3BucketVersioningEnabled',
      'HIPAA.Security-S3DefaultEncryptionKMS',
    ];
    Validations.of(bucket).acknowledge(...findings.map((id) => ({ id, reason: 'Throwaway test bucket.' })));
    expect(synthesisError(app)).toBeUndefined();
  });
});
