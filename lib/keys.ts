/**
 * Every key of the single table is built here, and only here. All keys start with the client id
 * (tenant isolation by construction); the one exception is the API-key lookup, which is how a
 * client id is found in the first place. The `#` delimiter is refused in every id by its schema.
 * See docs/data-model.md for the access patterns these serve.
 */
export type Key = { pk: string; sk: string };

const client = (clientId: string) => `CLIENT#${clientId}`;

export const keys = {
  /** API key, looked up by the SHA-256 of the presented key (the authorizer's only read). */
  apiKey: (keyHash: string): Key => ({ pk: `APIKEY#${keyHash}`, sk: 'APIKEY' }),
  /** GSI1 entry that lists a client's API keys (for revocation by client). */
  apiKeyByClient: (clientId: string, keyId: string) => ({ gsi1pk: `${client(clientId)}#APIKEYS`, gsi1sk: keyId }),
  apiKeysOfClientPartition: (clientId: string) => `${client(clientId)}#APIKEYS`,

  client: (clientId: string): Key => ({ pk: client(clientId), sk: 'CLIENT' }),
  organization: (clientId: string, organizationId: string): Key => ({
    pk: client(clientId),
    sk: `ORG#${organizationId}`,
  }),
  clientUser: (clientId: string, clientUserId: string): Key => ({
    pk: client(clientId),
    sk: `USER#${clientUserId}`,
  }),

  /** A request and its attachments form one item collection. */
  requestCollection: (clientId: string, externalId: string) => `${client(clientId)}#REQ#${externalId}`,
  request: (clientId: string, externalId: string): Key => ({
    pk: `${client(clientId)}#REQ#${externalId}`,
    sk: 'REQUEST',
  }),
  attachment: (clientId: string, externalId: string, attachmentId: string): Key => ({
    pk: `${client(clientId)}#REQ#${externalId}`,
    sk: `ATT#${attachmentId}`,
  }),
  attachmentPrefix: 'ATT#',
  /**
   * The S3 object of an attachment: the only place an object key is built. It starts with the client
   * id, so a client's files share one prefix; no id can contain `/`, so no id can forge another key.
   */
  attachmentObject: (clientId: string, externalId: string, attachmentId: string) =>
    `${clientId}/requests/${externalId}/attachments/${attachmentId}`,
  /** The ids in an attachment's object key (e.g. from an S3 event); undefined for any other key. */
  attachmentObjectIds: (objectKey: string) => {
    const match = /^([^/]+)\/requests\/([^/]+)\/attachments\/([^/]+)$/.exec(objectKey);
    return match ? { clientId: match[1]!, externalId: match[2]!, attachmentId: match[3]! } : undefined;
  },
  /** IAM resource pattern of every attachment object (`arnForObjects(...)`). */
  attachmentObjectPattern: '*/requests/*/attachments/*',

  portalAccount: (clientId: string, externalId: string): Key => ({
    pk: `${client(clientId)}#PACC#${externalId}`,
    sk: 'PACC',
  }),
  /** GSI1: an organization's portal accounts in a stable order (creation time, then id). */
  portalAccountsOfOrganization: (clientId: string, organizationId: string) =>
    `${client(clientId)}#ORG#${organizationId}#PACC`,
  portalAccountOrder: (createdAt: string, externalId: string) => `${createdAt}#${externalId}`,
} as const;
