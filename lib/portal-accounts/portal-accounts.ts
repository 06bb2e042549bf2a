import {
  changedByAnotherWrite,
  changedConcurrently,
  checkIfMatch,
  retryOnConflict,
  staleVersion,
  VersionConflict,
} from '#lib/concurrency';
import { cursorSigningKeys } from '#lib/crypto/config';
import { normalizeSearchText, type PortalAccountStatus, type StoredPortalAccount } from '#lib/entities/portal-account';
import { AlreadyExists, Conflict, Invalid, NotFound } from '#lib/errors';
import { log } from '#lib/observability/logger';
import { type CursorScope, encodeCursor, filterHashOf, type PageRequest, pageStart } from '#lib/pagination/cursor';
import { clientUserInScope, reaches, type Scope } from '#lib/tenancy/scope';
import type { StorageQuotas } from '#lib/tenancy/storage-quotas';
import type { TenantStore } from '#lib/tenancy/tenant-store';
import type { CredentialSealer } from './credentials.ts';
import type { PortalAccountCriteria, PortalAccountStore } from './portal-account-store.ts';
import { portalOf } from './portal-registry.ts';

/**
 * Portal-account use cases, independent of HTTP and storage (docs/portal-accounts.md).
 * - The organization is always resolved from clientUserId within the caller's scope (404 if unknown).
 * - Scope (#lib/tenancy/scope): an organization-restricted key reaches only its organization's
 *   accounts and client users; anything else is a 404, as if it did not exist. Only an unrestricted
 *   key can move an account to another organization (PUT with another organization's clientUserId).
 * - Secrets are sealed before they reach the store and never leave it: representations say only
 *   whether each is set and when it changed. Logs carry ids and outcomes, never usernames or secrets.
 * - PUT replaces every non-secret field; an omitted secret is kept, `totpSecret: null` removes it.
 * - If-Match (ETag `"<version>"`) or a body `version` makes a write conditional: stale → 412.
 */
export interface PortalAccountInput {
  externalId?: string;
  clientUserId: string;
  portalId: string;
  payerIds?: string[];
  displayName?: string;
  username: string;
  password?: string;
  totpSecret?: string | null;
  status?: PortalAccountStatus;
  version?: number;
}

export type NewPortalAccount = PortalAccountInput & { externalId: string; password: string; totpSecret?: string };

export type { PageRequest };

export interface FilterRequest extends PageRequest {
  clientUserId: string;
  portalId?: string;
  payerId?: string;
  search?: string;
  status?: PortalAccountStatus;
}

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;
const PAGE_BOUNDS = { defaultPageSize: DEFAULT_PAGE_SIZE, maxPageSize: MAX_PAGE_SIZE };
/** What the cursors of these lists are signed for (docs/portal-accounts.md, "Listing, filtering and cursors"). */
const CURSOR_PURPOSE = 'portal-accounts-cursor/v1';
/**
 * Items one page request may read before answering with a short, `partial` page: what a payer or
 * text filter (no key condition covers them) reads at most, whatever the organization's size.
 * Twice the largest page, so a page of 100 whose filter matches one account in two still fills.
 */
export const MAX_EVALUATED_PER_PAGE = 200;
const MAX_ATTEMPTS = 3;
const SUBJECT = 'portal account';

/** What clients read: never a secret, only whether it is set and when it changed. */
export const representationOf = (account: StoredPortalAccount) => ({
  externalId: account.externalId,
  clientUserId: account.clientUserId,
  organizationId: account.organizationId,
  portalId: account.portalId,
  portalName: portalOf(account.portalId)?.name ?? account.portalId,
  payerIds: account.payerIds,
  displayName: account.displayName,
  username: account.username,
  status: account.status,
  lastLogin: account.lastLogin,
  attention: account.attention ? { reason: account.attention.reason, since: account.attention.since } : null,
  passwordSet: true,
  passwordChangedAt: account.passwordChangedAt,
  totpSecretSet: account.totpSecret !== null,
  totpSecretChangedAt: account.totpSecretChangedAt,
  createdAt: account.createdAt,
  updatedAt: account.updatedAt,
  version: account.version,
});

export type PortalAccountRepresentation = ReturnType<typeof representationOf>;

export const etagOf = (account: Pick<StoredPortalAccount, 'version'>) => `"${account.version}"`;

/** TOTP seeds are base32: stored upper case without padding, the form authenticators expect. */
const normalizeTotpSecret = (secret: string) => secret.toUpperCase().replace(/=+$/, '');

interface Preconditions {
  ifMatch?: string | undefined;
  version?: number | undefined;
}

const hasPrecondition = (p: Preconditions) => p.ifMatch !== undefined || p.version !== undefined;

/** A body `version` is an If-Match of that one ETag. */
const checkPreconditions = (p: Preconditions, current: StoredPortalAccount) => {
  if (p.version !== undefined && p.version !== current.version) throw staleVersion(SUBJECT, etagOf(current));
  checkIfMatch(p.ifMatch, etagOf(current), SUBJECT);
};

/**
 * Another writer won the race: with a precondition that is a stale write; without one, the caller
 * reads again and retries a few times.
 */
const retryOptions = (p: Preconditions) => ({
  attempts: hasPrecondition(p) ? 1 : MAX_ATTEMPTS,
  onExhausted: () => (hasPrecondition(p) ? changedByAnotherWrite(SUBJECT) : changedConcurrently(SUBJECT)),
});

export interface PortalAccountDependencies {
  store: PortalAccountStore;
  tenants: Pick<TenantStore, 'getClientUser'>;
  /** The portal accounts per organization quota: counted on create and move, given back on delete and move. */
  quotas: Pick<StorageQuotas, 'reservePortalAccount' | 'releasePortalAccount'>;
  /** Seals secrets; only create and replace need it (service.ts). */
  sealer?: CredentialSealer;
  cursorKeys?: () => Buffer[] | Promise<Buffer[]>;
  now?: () => Date;
  maxEvaluatedPerPage?: number;
}

/** The fields a client writes (all but the secrets), with their defaults; create and replace share them. */
const describedBy = (input: PortalAccountInput) => ({
  clientUserId: input.clientUserId,
  portalId: input.portalId,
  payerIds: input.payerIds ?? [],
  displayName: input.displayName ?? portalOf(input.portalId)?.name ?? input.portalId,
  username: input.username,
  status: input.status ?? ('active' as const),
});

const noSealer: CredentialSealer = () => {
  throw new Error('This portal-account service was built without a sealer (see service.ts)');
};

export const portalAccountService = ({
  store,
  tenants,
  quotas,
  sealer = noSealer,
  cursorKeys = cursorSigningKeys,
  now = () => new Date(),
  maxEvaluatedPerPage = MAX_EVALUATED_PER_PAGE,
}: PortalAccountDependencies) => {
  const organizationOf = async (scope: Scope, clientUserId: string) =>
    (await clientUserInScope(tenants, scope, clientUserId)).organizationId;

  /** Another organization's account is not found, for a key restricted to one. */
  const load = async (scope: Scope, externalId: string) => {
    const account = await store.get(scope.clientId, externalId);
    if (!account || !reaches(scope, account.organizationId)) throw new NotFound(`Portal account ${externalId}`);
    return account;
  };

  const page = async (scope: Scope, clientUserId: string, criteria: PortalAccountCriteria, request: PageRequest) => {
    const { clientId } = scope;
    const organizationId = await organizationOf(scope, clientUserId);
    const cursorScope: CursorScope = { purpose: CURSOR_PURPOSE, bindings: [clientId, organizationId] };
    const filterHash = filterHashOf(criteria);
    const { pageSize, after } = pageStart(await cursorKeys(), cursorScope, filterHash, request, PAGE_BOUNDS);
    const result = await store.page({
      clientId,
      organizationId,
      criteria,
      ...(after !== undefined ? { after } : {}),
      limit: pageSize,
      maxEvaluated: maxEvaluatedPerPage,
    });
    return {
      items: result.items.map(representationOf),
      pageSize,
      nextCursor: result.next
        ? encodeCursor(await cursorKeys(), cursorScope, { after: result.next, filterHash, pageSize })
        : null,
      // True when the read bound, not the end of the matches, ended a short (even empty) page.
      partial: result.partial,
    };
  };

  return {
    get: (scope: Scope, externalId: string) => load(scope, externalId),

    create: async (scope: Scope, input: NewPortalAccount): Promise<StoredPortalAccount> => {
      const { clientId } = scope;
      const organizationId = await organizationOf(scope, input.clientUserId);
      // No read first: the conditional put refuses an existing externalId (409 below).
      const { externalId } = input;
      const at = now().toISOString();
      const ref = { clientId, organizationId, externalId };
      const account: StoredPortalAccount = {
        ...ref,
        ...describedBy(input),
        lastLogin: null,
        attention: null,
        password: await sealer(ref, 'password', input.password),
        passwordChangedAt: at,
        totpSecret:
          input.totpSecret === undefined
            ? null
            : await sealer(ref, 'totpSecret', normalizeTotpSecret(input.totpSecret)),
        totpSecretChangedAt: input.totpSecret === undefined ? null : at,
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      await quotas.reservePortalAccount(clientId, organizationId);
      try {
        await store.create(account);
      } catch (error) {
        await quotas.releasePortalAccount(clientId, organizationId);
        if (error instanceof VersionConflict) throw new AlreadyExists(`Portal account ${externalId}`);
        throw error;
      }
      log.info('Portal account created', {
        clientId,
        organizationId,
        portalAccountId: externalId,
        portalId: account.portalId,
        totpSecretSet: account.totpSecret !== null,
        keyring: account.password.keyring,
      });
      return account;
    },

    replace: async (
      scope: Scope,
      externalId: string,
      input: PortalAccountInput,
      ifMatch?: string,
    ): Promise<StoredPortalAccount> => {
      if (input.externalId !== undefined && input.externalId !== externalId) {
        throw new Invalid(`externalId in the body ("${input.externalId}") does not match the path ("${externalId}").`);
      }
      const preconditions = { ifMatch, version: input.version };
      return retryOnConflict(async () => {
        const current = await load(scope, externalId);
        checkPreconditions(preconditions, current);
        // Within a restricted scope both organizations are the key's: such a key never moves an account.
        const organizationId = await organizationOf(scope, input.clientUserId);
        const moving = organizationId !== current.organizationId;
        // Secrets are sealed for their organization and cannot be re-sealed without decrypting.
        if (moving && (input.password === undefined || (current.totpSecret && input.totpSecret === undefined))) {
          throw new Conflict(
            'Moving a portal account to another organization requires its password (and its TOTP secret, if one is set) again.',
          );
        }
        const at = now().toISOString();
        const ref = { clientId: scope.clientId, organizationId, externalId };
        const totpChanged = input.totpSecret !== undefined && !(input.totpSecret === null && !current.totpSecret);
        const next: StoredPortalAccount = {
          ...ref,
          ...describedBy(input),
          lastLogin: current.lastLogin,
          // New credentials, or the status set to active, say the client dealt with the portal's refusal.
          attention:
            input.password !== undefined || totpChanged || input.status === 'active' ? null : current.attention,
          password: input.password === undefined ? current.password : await sealer(ref, 'password', input.password),
          passwordChangedAt: input.password === undefined ? current.passwordChangedAt : at,
          totpSecret:
            input.totpSecret === undefined
              ? current.totpSecret
              : input.totpSecret === null
                ? null
                : await sealer(ref, 'totpSecret', normalizeTotpSecret(input.totpSecret)),
          totpSecretChangedAt: totpChanged ? at : current.totpSecretChangedAt,
          version: current.version + 1,
          createdAt: current.createdAt,
          updatedAt: at,
        };
        // A move counts the account in its new organization first: refused there, nothing changes.
        if (moving) await quotas.reservePortalAccount(scope.clientId, organizationId);
        try {
          await store.update(next, current.version);
        } catch (error) {
          if (moving) await quotas.releasePortalAccount(scope.clientId, organizationId);
          throw error;
        }
        if (moving) await quotas.releasePortalAccount(scope.clientId, current.organizationId);
        log.info('Portal account replaced', {
          clientId: scope.clientId,
          organizationId,
          portalAccountId: externalId,
          portalId: next.portalId,
          version: next.version,
          passwordChanged: input.password !== undefined,
          totpSecretChanged: totpChanged,
          movedOrganization: moving,
        });
        return next;
      }, retryOptions(preconditions));
    },

    remove: (scope: Scope, externalId: string, ifMatch?: string): Promise<void> =>
      retryOnConflict(async () => {
        const current = await load(scope, externalId);
        checkPreconditions({ ifMatch }, current);
        await store.delete(scope.clientId, externalId, current.version);
        await quotas.releasePortalAccount(scope.clientId, current.organizationId);
        log.info('Portal account deleted', {
          clientId: scope.clientId,
          organizationId: current.organizationId,
          portalAccountId: externalId,
          version: current.version,
        });
      }, retryOptions({ ifMatch })),

    /** GET …/{clientUserId}/list: the organization's accounts, paged. */
    list: (scope: Scope, clientUserId: string, request: PageRequest) => page(scope, clientUserId, {}, request),

    /** POST …/filter. */
    filter: (scope: Scope, { clientUserId, portalId, payerId, search, status, pageSize, cursor }: FilterRequest) => {
      const criteria: PortalAccountCriteria = {
        ...(portalId !== undefined ? { portalId } : {}),
        ...(payerId !== undefined ? { payerId } : {}),
        ...(status !== undefined ? { status } : {}),
        ...(search !== undefined ? { search: normalizeSearchText(search.trim()) } : {}),
      };
      return page(scope, clientUserId, criteria, {
        ...(pageSize !== undefined ? { pageSize } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
      });
    },
  };
};
