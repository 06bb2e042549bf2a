import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceFunction } from '#infra/constructs/service-function';
import { functionNameOf, routes } from '#lib/routes';
import { logicalIdOf, statementsOf, synthesize } from './synthesized-app.ts';

/**
 * The audit trail's log group and who may write to it, on an app with two routes: one audited
 * (a PHI read), one not (the schemas list). cdk-nag runs as part of the synthesis.
 */
const audited = routes.find((route) => route.handler === 'requests/get-request')!;
const unaudited = routes.find((route) => route.handler === 'schemas/list-schemas')!;

let synthesized: ReturnType<typeof synthesize>;
beforeAll(() => {
  synthesized = synthesize({ routes: [audited, unaudited], eventFunctions: [] });
}, 180_000);
afterAll(() => synthesized?.cleanUp());

const auditLogGroupId = () => logicalIdOf(synthesized.data.audit.logGroup);
const functionOf = (route: typeof audited) => synthesized.api.node.findChild(functionNameOf(route)) as ServiceFunction;
const environmentOf = (fn: ServiceFunction) =>
  synthesized.apiTemplate.toJSON().Resources[logicalIdOf(fn.function)].Properties.Environment.Variables;

/** Every IAM statement of a template that names the audit log group. */
const statementsOnAuditLog = (template: typeof synthesized.apiTemplate) =>
  Object.values(template.toJSON().Resources as Record<string, any>)
    .filter((resource) => ['AWS::IAM::ManagedPolicy', 'AWS::IAM::Policy'].includes(resource.Type))
    .flatMap((resource) => resource.Properties.PolicyDocument.Statement as any[])
    .filter((statement) => JSON.stringify(statement.Resource).includes(auditLogGroupId()));

describe('the audit log group', () => {
  it('lives in the data stack, encrypted with the data key, kept six years, retained on deletion', () => {
    const group = synthesized.dataTemplate.toJSON().Resources[auditLogGroupId()];
    expect(group).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: {
        KmsKeyId: { 'Fn::GetAtt': [logicalIdOf(synthesized.data.keys.data), 'Arn'] },
        LogGroupName: '/ServiceReviewData/audit',
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    // Six years is 2192 days; a longer retention would do too, never a shorter one or none.
    expect(group.Properties.RetentionInDays).toBeGreaterThanOrEqual(2192);
  });

  it('is named to the functions of audited routes only', () => {
    expect(JSON.stringify(environmentOf(functionOf(audited)).AUDIT_LOG_GROUP)).toContain(auditLogGroupId());
    expect(environmentOf(functionOf(unaudited)).AUDIT_LOG_GROUP).toBeUndefined();
  });

  it('may only be appended to: streams and events, by the functions of audited routes', () => {
    const onAuditLog = (fn: ServiceFunction) =>
      statementsOf(synthesized.apiTemplate, fn).filter((statement) => statement.resources.includes(auditLogGroupId()));
    expect(
      onAuditLog(functionOf(audited))
        .flatMap((statement) => statement.actions)
        .sort(),
    ).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(onAuditLog(functionOf(unaudited))).toEqual([]);
    // Nothing anywhere in the app may read, delete or reconfigure it.
    const everyAction = [synthesized.apiTemplate, synthesized.automationTemplate, synthesized.dataTemplate]
      .flatMap(statementsOnAuditLog)
      .flatMap((statement) => [statement.Action].flat());
    expect(new Set(everyAction)).toEqual(new Set(['logs:CreateLogStream', 'logs:PutLogEvents']));
  });
});
