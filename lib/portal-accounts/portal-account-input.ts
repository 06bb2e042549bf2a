import type { PortalAccountStatus } from '#lib/entities/portal-account';
import type { PageRequest } from '#lib/pagination/cursor';

/** What a client writes: the body of a create (POST) or a replace (PUT), secrets in clear. */
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

export interface FilterRequest extends PageRequest {
  clientUserId: string;
  portalId?: string;
  payerId?: string;
  search?: string;
  status?: PortalAccountStatus;
}
