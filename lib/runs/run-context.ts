import type { AttachmentStore } from '#lib/attachments/attachment-store';
import type { StoredRequest } from '#lib/entities/request';
import { NotFound } from '#lib/errors';
import type { PortalAccountStore } from '#lib/portal-accounts/portal-account-store';
import type { AuthorizationHistoryStore } from '#lib/requests/authorization-history-store';
import type { RequestStore } from '#lib/requests/request-store';
import type { TenantStore } from '#lib/tenancy/tenant-store';
import type { AutomationQuotaService } from './automation-quotas.ts';
import type { AutomationStarter } from './automation-starter.ts';
import { runEnder } from './execution-ended.ts';
import type { PayerDirectory } from './payer-directory.ts';
import type { RunStore } from './run-store.ts';
import type { ScraperTokens } from './scraper-token.ts';
import type { ScreenshotStorage } from './screenshot-storage.ts';

export interface RpaDependencies {
  runs: RunStore;
  requests: Pick<RequestStore, 'get'>;
  accounts: Pick<PortalAccountStore, 'get' | 'page'>;
  /** Whether the automation drives a portal (lib/portal/automated-portals.ts). */
  automated: (portalId: string) => boolean;
  /** Payer endpoints and connections: a request whose payer has an API goes through it (channel-choice.ts). */
  payers: PayerDirectory;
  /** The request's attachments, listed for a submission's Bundle (supportingInfo). */
  attachments: Pick<AttachmentStore, 'listByRequest'>;
  tenants: Pick<TenantStore, 'getClientUser' | 'getApiKeyById'>;
  automation: AutomationStarter;
  /** Per-client run quotas and runs in flight (automation-quotas.ts). */
  quotas: Pick<AutomationQuotaService, 'admit'>;
  screenshots: Pick<ScreenshotStorage, 'presignGet'>;
  /** The requests' authorization histories, for the scraper session. */
  history: Pick<AuthorizationHistoryStore, 'page'>;
  tokens: ScraperTokens;
  now?: () => Date;
}

/** The dependencies with their defaults, and the run ender built on them: what every use case is given first. */
export type RpaContext = Required<RpaDependencies> & { ender: ReturnType<typeof runEnder> };

/** What reading runs and batches needs (run-reads.ts): no token key, screenshots or portal accounts. */
export type RunReadDependencies = Pick<RpaDependencies, 'runs' | 'automation' | 'now'>;
export type RunReadContext = Pick<RpaContext, 'runs' | 'automation' | 'now' | 'ender'>;
/** What starting runs and batches needs (run-start.ts): no token key, screenshots or histories. */
export type RunStartDependencies = Pick<
  RpaDependencies,
  | 'runs'
  | 'requests'
  | 'accounts'
  | 'automated'
  | 'payers'
  | 'attachments'
  | 'tenants'
  | 'automation'
  | 'quotas'
  | 'now'
>;
export type RunStartContext = Pick<
  RpaContext,
  | 'runs'
  | 'requests'
  | 'accounts'
  | 'automated'
  | 'payers'
  | 'attachments'
  | 'tenants'
  | 'automation'
  | 'quotas'
  | 'now'
>;

/** What the scraper's token and session need (scraper-access.ts): no Step Functions, portal accounts or quotas. */
export type ScraperAccessDependencies = Pick<
  RpaDependencies,
  'runs' | 'requests' | 'tenants' | 'screenshots' | 'history' | 'tokens' | 'now'
>;
export type ScraperAccessContext = Pick<
  RpaContext,
  'runs' | 'requests' | 'tenants' | 'screenshots' | 'history' | 'tokens' | 'now'
>;

/** `deps` with the clock's default and the run ender: a route's own wiring passes only what its use cases read. */
export function contextOf<Deps extends Pick<RpaDependencies, 'runs' | 'now'>>(
  deps: Deps,
): Deps & { now: () => Date; ender: ReturnType<typeof runEnder> } {
  const now = deps.now ?? (() => new Date());
  return { ...deps, now, ender: runEnder({ runs: deps.runs, now }) };
}

export async function existingRequest(
  ctx: Pick<RpaContext, 'requests'>,
  clientId: string,
  externalId: string,
): Promise<StoredRequest> {
  const request = await ctx.requests.get(clientId, externalId);
  if (!request) throw new NotFound(`Request ${externalId}`);
  return request;
}
