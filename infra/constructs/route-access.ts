import type { DataStack } from '#infra/data-stack';
import type { InvokedFunctionName, RouteAccess } from '#lib/routes/access-model';
import type { StateMachineKey } from '#lib/runs/state-machines';
import { bindBucket, bindScreenshots } from './attachments-bucket.ts';
import { bindAutomation } from './automation-state-machine.ts';
import { bindSecretsDecrypt, bindSecretsKey, bindWebhookSecretsOpen } from './encryption-keys.ts';
import { bindPayerAssertionSigning } from './payer-assertion-signing.ts';
import { bindInvoke, type ServiceFunction } from './service-function.ts';
import { bindTable } from './service-table.ts';
import { bindSigningSecret } from './signing-secret.ts';

/** A function of `invokedFunctions` as deployed: its construct, and the variable its callers read its name from. */
export interface InvokeTarget {
  fn: ServiceFunction;
  environment: string;
}

/**
 * What `automation` access needs, the deployed state machines' names; what `invoke` access needs,
 * the invoked functions (both of the automation stack).
 */
export interface AutomationTarget {
  stateMachineNames?: Record<StateMachineKey, string>;
  invokeTargets?: Partial<Record<InvokedFunctionName, InvokeTarget>>;
}

/**
 * Turns a route's (or event function's, automation task's, webhook delivery function's) declared access
 * into least-privilege grants and env vars.
 */
export const bindRouteAccess = (
  fn: ServiceFunction,
  access: RouteAccess,
  data: DataStack,
  automation?: AutomationTarget,
) => {
  if (access.table) bindTable(fn, data.table, access.table);
  if (access.bucket?.length) bindBucket(fn, data.attachments, access.bucket);
  if (access.secrets === 'encrypt') bindSecretsKey(fn, data.keys.secrets);
  if (access.secrets === 'decrypt') bindSecretsDecrypt(fn, data.keys.secrets);
  if (access.webhookSecrets === 'open') bindWebhookSecretsOpen(fn, data.keys.secrets);
  if (access.payerAssertions === 'sign') bindPayerAssertionSigning(fn);
  if (access.cursors === 'sign') bindSigningSecret(fn, data.cursorSigning);
  if (access.rpaTokens) bindSigningSecret(fn, data.rpaTokens);
  if (access.requestFingerprints) bindSigningSecret(fn, data.requestFingerprints);
  if (access.screenshots?.length) bindScreenshots(fn, data.attachments, access.screenshots);
  if (access.automation) {
    if (!automation?.stateMachineNames) {
      throw new Error(`${fn.node.path} has automation access, but no automation stack was given`);
    }
    bindAutomation(fn, automation.stateMachineNames, access.automation);
  }
  for (const name of access.invoke ?? []) {
    const target = automation?.invokeTargets?.[name];
    if (!target) throw new Error(`${fn.node.path} invokes ${name}, which was not created before it`);
    bindInvoke(fn, target.fn, target.environment);
  }
};
