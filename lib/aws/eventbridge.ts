import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { traced } from '#lib/observability/tracer';
import { lazyClient } from './lazy-client.ts';

/** Module-scope, created on first use, EventBridge client (the admin CLI's replay puts events on the bus). */
export const eventBridge = lazyClient(() => traced(new EventBridgeClient({})));
