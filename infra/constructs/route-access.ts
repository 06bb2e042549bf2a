import type { DataStack } from '#infra/data-stack';
import type { RouteAccess } from '#lib/routes';
import { bindBucket } from './attachments-bucket.ts';
import { bindCursorSigningSecret } from './cursor-signing-secret.ts';
import { bindSecretsKey } from './encryption-keys.ts';
import { bindRpaTokenSecret } from './rpa-token-secret.ts';
import type { ServiceFunction } from './service-function.ts';
import { bindTable } from './service-table.ts';

/** Turns a route's (or event function's) declared access into least-privilege grants and env vars. */
export const bindRouteAccess = (fn: ServiceFunction, access: RouteAccess, data: DataStack) => {
  if (access.table) bindTable(fn, data.table, access.table);
  if (access.bucket?.length) bindBucket(fn, data.attachments, access.bucket);
  if (access.secrets === 'encrypt') bindSecretsKey(fn, data.keys.secrets);
  if (access.cursors === 'sign') bindCursorSigningSecret(fn, data.cursorSigning);
  if (access.rpaTokens) bindRpaTokenSecret(fn, data.rpaTokens);
};
