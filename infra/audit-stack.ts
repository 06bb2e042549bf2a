import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { serviceConfigOf } from '#infra/config';
import { AuditQueries } from '#infra/constructs/audit-queries';
import { AuditTrail } from '#infra/constructs/audit-trail';
import { ServiceFunction } from '#infra/constructs/service-function';
import type { DataStack } from '#infra/data-stack';
import type { Route } from '#lib/routes/route-table';

export interface AuditStackProps extends StackProps {
  data: DataStack;
  /** The stacks of the service's functions (API, automation, events): every log group of theirs is subscribed. */
  functionStacks: readonly Stack[];
  /** The route table: the records' id columns. */
  routes: readonly Route[];
}

/**
 * The audit trail (infra/constructs/audit-trail.ts, audit-queries.ts): the locked bucket, the delivery
 * from every function's log group, CloudTrail's data events of the attachments bucket, the Glue
 * tables and saved queries. Apart from the API stack (its resource count) and from the data stack
 * (it needs the functions' log groups, which come after): it depends on the API, automation and events stacks.
 * Like the data stack, termination-protected, and its bucket and key are retained.
 */
export class AuditStack extends Stack {
  readonly trail: AuditTrail;
  readonly queries: AuditQueries;

  constructor(scope: Construct, id: string, props: AuditStackProps) {
    const { data, functionStacks, routes, ...stackProps } = props;
    super(scope, id, { terminationProtection: true, ...stackProps });
    for (const stack of functionStacks) this.addStackDependency(stack);
    // Every function's log group: any line with the audit marker is shipped, whichever function wrote it.
    const logGroups = functionStacks.flatMap((stack) =>
      stack.node
        .findAll()
        .filter((construct): construct is ServiceFunction => construct instanceof ServiceFunction)
        .map((fn) => ({ name: fn.node.id, logGroup: fn.function.logGroup })),
    );
    this.trail = new AuditTrail(this, 'Trail', {
      config: serviceConfigOf(this),
      logGroups,
      attachmentsBucketName: data.attachments.bucketName,
      logKey: data.keys.data,
    });
    this.queries = new AuditQueries(this, 'Queries', {
      bucket: this.trail.bucket,
      key: this.trail.key,
      accessLogs: this.trail.accessLogs,
      routes,
    });
  }
}
