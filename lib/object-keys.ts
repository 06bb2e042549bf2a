/**
 * The S3 object keys of attachments and automation screenshots, built here and only here. (Table
 * keys are declared with their entities in lib/entities/.) A key starts with the client id, so a
 * client's files share one prefix (tenant isolation by construction); no id can contain `/`, so no
 * id can forge another key.
 */
export const keys = {
  /** The S3 object of an attachment. */
  attachmentObject: (clientId: string, externalId: string, attachmentId: string) =>
    `${clientId}/requests/${externalId}/attachments/${attachmentId}`,
  /** The ids in an attachment's object key (e.g. from an S3 event); undefined for any other key. */
  attachmentObjectIds: (objectKey: string) => {
    const match = /^([^/]+)\/requests\/([^/]+)\/attachments\/([^/]+)$/.exec(objectKey);
    return match ? { clientId: match[1]!, externalId: match[2]!, attachmentId: match[3]! } : undefined;
  },
  /** IAM resource pattern of every attachment object (`arnForObjects(...)`). */
  attachmentObjectPattern: '*/requests/*/attachments/*',
  /** The n-th screenshot (from 1) of an automation run, in the attachments bucket. */
  rpaScreenshotObject: (clientId: string, runId: string, n: number) => `${clientId}/rpa/${runId}/${n}.png`,
} as const;
