import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.ts';

export interface AuditLogProps {
  encryptionKey: IKey;
}

/** HIPAA § 164.316(b)(2)(i): documentation of the safeguards is kept six years; the trail alike. */
export const AUDIT_RETENTION = RetentionDays.SIX_YEARS;

/**
 * The audit trail's log group (lib/http/audit.ts, docs/security.md "Audit trail"): one JSON event
 * per access to PHI or credentials through the API, queryable with CloudWatch Logs Insights.
 * Encrypted with the data key, kept six years, and retained when its stack is deleted. The functions
 * that write to it may only add streams and events (`bindAuditLog`); nothing of the service reads it.
 */
export class AuditLog extends Construct {
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: AuditLogProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Events', {
      logGroupName: `/${Stack.of(this).stackName}/audit`,
      encryptionKey: props.encryptionKey,
      retention: AUDIT_RETENTION,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}

/**
 * Lets an API function append audit events (AUDIT_LOG_GROUP): create its stream and put events,
 * which CloudWatch Logs never lets anyone change. No read, no delete, no retention change.
 */
export const bindAuditLog = (fn: ServiceFunction, audit: AuditLog) => {
  fn.addEnvironment('AUDIT_LOG_GROUP', audit.logGroup.logGroupName);
  audit.logGroup.grant(fn, 'logs:CreateLogStream', 'logs:PutLogEvents');
};
