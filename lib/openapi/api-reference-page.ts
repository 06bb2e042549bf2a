import { API_REFERENCE_SCRIPT } from '#lib/routes/route-table';

/**
 * The API reference page: Scalar's standalone renderer (from npm, served by this API: no CDN, so
 * the page works offline) reading the OpenAPI document. Both URLs are relative to the page
 * (`/api/external/docs`), so the page works under a stage prefix too.
 *
 * The renderer injects styles (style-src 'unsafe-inline'); scripts only from this origin, no inline
 * script, nothing fetched but this API (connect-src 'self'), no fonts from elsewhere.
 */
export const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Scalar's HTML configuration: nothing that calls out (fonts, its hosted client, its agent, telemetry, its toolbar). */
const configuration = {
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  agent: { disabled: true },
  // Its toolbar links to Scalar's hosted services; shown on localhost by default.
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  // Every tag open: the whole API is in view (and in the sidebar) at once.
  defaultOpenAllTags: true,
};

const escapeAttribute = (value: string) =>
  value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

export const apiReferencePage = (): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Service review API reference</title>
</head>
<body>
<script id="api-reference" type="application/json" data-url="openapi.json" data-configuration="${escapeAttribute(JSON.stringify(configuration))}"></script>
<script src="docs/${API_REFERENCE_SCRIPT}"></script>
</body>
</html>
`;
