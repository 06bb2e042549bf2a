import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { ApiStack } from '#infra/api-stack';
import type { AuditStack } from '#infra/audit-stack';
import type { AutomationStack } from '#infra/automation-stack';
import { serviceConfigOf } from '#infra/config';
import { Monitoring } from '#infra/constructs/monitoring';
import { OUTBOX_REPLAY_RUNBOOK } from '#infra/constructs/outbox-pipe';
import { ServiceFunction } from '#infra/constructs/service-function';
import type { EventsStack } from '#infra/events-stack';
import { functionNameOf, type Route } from '#lib/routes/route-table';

export interface MonitoringStackProps extends StackProps {
  api: ApiStack;
  automation: AutomationStack;
  /** The outbox pipe and webhook delivery: alarms on their failures. */
  events: EventsStack;
  /** The audit trail's delivery: alarms on its failures. */
  audit: AuditStack;
  routes: readonly Route[];
}

/**
 * Alarms, their topic and the dashboard (infra/constructs/monitoring.ts), apart so that the other
 * stacks know nothing of them: every ServiceFunction of the API, automation and events stacks is found
 * in the construct tree, with its dead-letter queue, every state machine of the automation, the audit
 * trail's delivery stream, and the events stack's pipe, dead-letter queues and delivery functions.
 */
export class MonitoringStack extends Stack {
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: MonitoringStackProps) {
    super(scope, id, props);
    const { events } = props;
    this.addStackDependency(props.api);
    this.addStackDependency(props.audit);
    this.addStackDependency(events);
    const functions = [props.api, props.automation, events].flatMap((stack) =>
      stack.node
        .findAll()
        .filter((construct): construct is ServiceFunction => construct instanceof ServiceFunction)
        .map((fn) => ({ name: fn.node.id, fn })),
    );
    this.monitoring = new Monitoring(this, 'Monitoring', {
      config: serviceConfigOf(this),
      routeNames: props.routes.map(functionNameOf),
      functions,
      deadLetterQueues: [
        ...functions.flatMap(({ name, fn }) => (fn.deadLetterQueue ? [{ name, queue: fn.deadLetterQueue }] : [])),
        { name: 'WebhookEvents', queue: events.deadLetterQueue },
        { name: 'OutboxPipe', queue: events.pipe.deadLetterQueue, runbook: OUTBOX_REPLAY_RUNBOOK },
      ],
      stateMachines: [...Object.values(props.automation.stateMachines), props.automation.dueRechecks.stateMachine].map(
        (machine) => ({ name: machine.node.id, stateMachine: machine.stateMachine }),
      ),
      deliveryStreams: [{ name: 'AuditTrail', stream: props.audit.trail.deliveryStream }],
      webhookDelivery: {
        functions: Object.entries(events.functions).map(([name, fn]) => ({ name, fn })),
        pipeName: events.pipe.pipe.name!,
        queue: events.deliveries.queue,
      },
    });
  }
}
