/**
 * The document's global tags: each group of operations with a line on what it is for. Generators and
 * reference pages read them (group names, order, descriptions); Redocly's lint requires every
 * operation's tag to be one of them, with a description (redocly.yaml).
 */
const TAG_DESCRIPTIONS = {
  Requests:
    'Prior-authorization requests ("service reviews"): create, replace, change and read them, with their authorization status.',
  Attachments:
    "A request's clinical documents: uploaded in the body (up to 4 MiB) or through a presigned URL (up to 1 GiB), then listed, downloaded or deleted.",
  'Portal accounts':
    "The payer-portal accounts the automation signs in with, per client user's organization; passwords and TOTP secrets are write-only.",
  'Payer connections':
    "An organization's client_id at a payer's Prior Authorization API (Da Vinci PAS), per client user's organization, with the jwksUri the payer verifies our client assertions with.",
  'Service-review automation':
    "A browser on the payer portal: fill a request's form (stopping before submitting), read authorization statuses in batches, and follow the runs.",
  Webhooks:
    "Subscriptions that POST events to the client's URL, signed by the Standard Webhooks scheme, and the record of their deliveries.",
  'Payer keys':
    'The public keys payers verify our SMART client assertions with: a JWK Set per API client, at the jwksUri registered with each payer; no API key needed.',
  'Payer notifications':
    "Where payers POST their notifications on our PAS subscriptions (R4 Subscriptions Backport, rest-hook): no API key, the subscription's channel secret instead; an event starts a status read of the claims it names.",
  Schemas: 'The JSON Schemas the API validates bodies with, to read, or to validate a payload against.',
  'API description': 'This OpenAPI document and its reference page; no API key needed.',
  Events:
    'What the service POSTs to a subscribed URL when an authorization changes or an automation run or batch finishes: ids, codes and statuses only, signed with Standard Webhooks headers.',
} as const;

export type Tag = keyof typeof TAG_DESCRIPTIONS;

/** The tag document.ts gives an obsolete route: its group's name, set apart. */
const OBSOLETE = /^(.+) \(v1, obsolete\)$/;

const descriptionOf = (name: string): string => {
  const obsolete = OBSOLETE.exec(name)?.[1];
  if (obsolete && obsolete in TAG_DESCRIPTIONS) {
    return `The obsolete v1 paths of ${obsolete}, for older clients: every answer carries Deprecation, Sunset and a Link to its v1.1 successor.`;
  }
  if (name in TAG_DESCRIPTIONS) return TAG_DESCRIPTIONS[name as Tag];
  throw new Error(`lib/openapi/tags.ts has no description for the tag "${name}"`);
};

/** The tags the operations of `paths` use, in the order they first appear (the reference page's order). */
export const globalTagsOf = (paths: Record<string, Record<string, unknown>>) => {
  const names = new Set<string>();
  for (const methods of Object.values(paths)) {
    for (const operation of Object.values(methods)) {
      for (const name of (operation as { tags?: string[] }).tags ?? []) names.add(name);
    }
  }
  return [...names].map((name) => ({ name, description: descriptionOf(name) }));
};
