import { PAYER_CONNECTION_ATTENTION_REASONS, PAYER_CONNECTION_STATUSES } from '#lib/entities/payer-connection';
import { closed, type JsonSchema, type Members, nullable, ref, string, timestamp } from '#lib/openapi/schema-builders';
import type { representationOf } from '#lib/payer-connections/payer-connection-representation';
import type { payerConnectionSchema } from '#lib/validation/schemas/payer-connection';

/**
 * Payer connections as the API answers them (docs/payer-connections.md): closed schemas whose members
 * are typed against the representation (`satisfies Members<…>`), so tsc fails when one changes without
 * the other. The members a client writes are the body schema's own (PayerConnection). Build time only.
 */
const written = (body: JsonSchema) =>
  body.properties as Record<keyof typeof payerConnectionSchema.properties, JsonSchema>;

const connectionOf = (body: JsonSchema) => {
  const { externalId, clientUserId, payerId, clientId } = written(body);
  return {
    externalId,
    clientUserId,
    organizationId: string('The organization of the client user it was last written with'),
    payerId,
    clientId,
    status: string(
      'active: used for the payer; attention: the payer refused our client assertion, nothing is sent with it until a new clientId is put or the status is set to active; disabled: never used',
      { enum: [...PAYER_CONNECTION_STATUSES] },
    ),
    statusReason: nullable(
      string("attention only: the payer's OAuth error code (RFC 6749 §5.2) that refused our client assertion", {
        enum: [...PAYER_CONNECTION_ATTENTION_REASONS],
      }),
    ),
    jwksUri: string(
      'Where the payer fetches the public keys that verify our client assertions: register it with the payer beside the clientId',
      { format: 'uri' },
    ),
    createdAt: timestamp('When it was created'),
    updatedAt: timestamp('When it last changed'),
    version: { type: 'integer', minimum: 1, description: 'Also the ETag: "<version>"' },
  } satisfies Members<ReturnType<typeof representationOf>>;
};

/** The representation and the list's page, from the PayerConnection body schema (as a component). */
export const payerConnectionSchemasOf = (body: JsonSchema): Record<string, JsonSchema> => ({
  PayerConnectionRepresentation: closed(
    'PayerConnectionRepresentation',
    "An organization's client_id at a payer's API, with the jwksUri to register beside it",
    connectionOf(body),
  ),
  PayerConnectionPage: closed('PayerConnectionPage', "A page of an organization's payer connections, oldest first", {
    items: { type: 'array', items: ref('PayerConnectionRepresentation') },
    pageSize: { type: 'integer', minimum: 1, maximum: 100 },
    nextCursor: nullable(string('Signed; send it back as cursor for the next page')),
  }),
});
