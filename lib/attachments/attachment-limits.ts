/** How long a direct upload may take between its record and its object before it counts as abandoned. */
export const DIRECT_UPLOAD_DEADLINE_SECONDS = 5 * 60;
/** Lifetime of a presigned upload URL. */
export const UPLOAD_URL_SECONDS = 15 * 60;
/** After the URL expires, time for an upload that started in time to finish and be verified. */
export const UPLOAD_GRACE_SECONDS = 60 * 60;
/** Lifetime of a download URL: the client follows the redirect at once. */
export const DOWNLOAD_URL_SECONDS = 60;
/** Keeps a request's list well inside Lambda's 6 MB response; held by the request's slots (attachment-slots.ts). */
export const MAX_ATTACHMENTS_PER_REQUEST = 100;
/** Tries of a use case that re-reads its record after losing a race for it (retryOnConflict). */
export const MAX_ATTEMPTS = 3;
