import { randomUUID } from 'node:crypto';
import { uniqueId } from '#test/support/api';

/** Ids of the data the hostile-input suite creates: `play` may be written by valid cases, `sentinel` never. */
export interface World {
  apiKey: string;
  clientUserId: string;
  /** A payer with an API in the payer directory: what a valid payer connection names. */
  payerId: string;
  play: { request: string; attachment: string; account: string; connection: string };
  sentinel: { request: string; attachment: string; account: string; connection: string };
}

/** Ids a case may create; fresh for every execution, so a valid write never lands on existing data. */
export interface CaseIds {
  fresh: string;
  uuid: string;
}
export const caseIds = (): CaseIds => ({ fresh: uniqueId('hx'), uuid: randomUUID() });
