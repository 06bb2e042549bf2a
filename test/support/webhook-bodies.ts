import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { payloadOf, type ServiceEvent } from '#lib/entities/service-event';

/** The built OpenAPI document's webhook body schema of each event type (lib/openapi/webhooks.ts). */
const webhookValidators = (() => {
  const document = JSON.parse(
    readFileSync(new URL('../../lib/openapi/generated/openapi.json', import.meta.url), 'utf8'),
  ) as { webhooks: Record<string, unknown> };
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  for (const [name, check] of Object.entries(fullFormats)) ajv.addFormat(name, check);
  ajv.addSchema(document, 'openapi.json');
  const cache = new Map<string, ValidateFunction>();
  return (type: string) => {
    if (!(type in document.webhooks)) throw new Error(`the document has no webhook for ${type}`);
    if (!cache.has(type)) {
      cache.set(
        type,
        ajv.getSchema(`openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema`)!,
      );
    }
    return cache.get(type)!;
  };
})();

/** The errors of a webhook body of `type`, against the document's schema (empty: it conforms). */
export const bodyErrors = (type: string, body: unknown) => {
  const validate = webhookValidators(type);
  return validate(body) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
};

/** The errors of the payload a webhook would deliver for `event`. */
export const webhookBodyErrors = (event: ServiceEvent) => bodyErrors(event.type, payloadOf(event));
