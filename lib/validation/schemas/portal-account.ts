import { DRAFT, identifier, text } from './common.ts';

/**
 * A payer-portal account as a client writes it. Secrets (password, totpSecret) are write-only:
 * they are envelope-encrypted before storage and never returned.
 */
export const portalAccountSchema = {
  $schema: DRAFT,
  $id: 'PortalAccount',
  title: 'PortalAccount',
  type: 'object',
  additionalProperties: false,
  required: ['externalId', 'clientUserId', 'portalId', 'username', 'password'],
  properties: {
    externalId: identifier("The client's id of this portal account"),
    clientUserId: identifier('Selects the organization the account belongs to'),
    portalId: identifier('A known portal (see the portal registry)'),
    payerIds: { type: 'array', maxItems: 50, items: text(80) },
    displayName: text(100),
    username: text(128),
    password: { type: 'string', minLength: 1, maxLength: 256, writeOnly: true },
    totpSecret: { type: 'string', pattern: '^[A-Z2-7]{16,128}=*$', writeOnly: true, description: 'Base32 TOTP seed' },
    status: { type: 'string', enum: ['active', 'disabled'] },
  },
} as const;
