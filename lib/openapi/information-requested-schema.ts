import {
  DECISION_LIMITS,
  DUE_BY_PATTERN,
  type InformationRequested,
  type RequestedInformation,
} from '#lib/entities/request';
import { closed, type Members, nullable, string, timestamp } from '#lib/openapi/schema-builders';

/** authorization.informationRequested as the request's representation and its history show it. */
const informationRequested = {
  requestedAt: timestamp('When we first read the request for more information'),
  dueBy: nullable(
    string('By when the payer wants it, as the payer wrote it (a date, or a date-time with its zone); null: not said', {
      maxLength: 40,
      pattern: DUE_BY_PATTERN,
    }),
  ),
  items: {
    type: 'array',
    minItems: 1,
    maxItems: DECISION_LIMITS.requestedInformation,
    description: 'What the payer asks for, in its order',
    items: closed('RequestedInformation', 'One document or piece of information the payer asks for', {
      code: closed('RequestedInformationCode', 'What is asked for, as a code', {
        system: nullable(
          string('The code system: http://loinc.org for a LOINC attachment code, else the X12 755 report type', {
            maxLength: 200,
          }),
        ),
        code: string('The code', { minLength: 1, maxLength: 30 }),
      } satisfies Members<RequestedInformation['code']>),
      text: nullable(string("The payer's words for it", { maxLength: DECISION_LIMITS.reasonText })),
      sequence: nullable({
        type: 'integer',
        minimum: 1,
        description: "The item it is about (the request's procedure at sequence − 1); null: the whole request",
      }),
    } satisfies Members<RequestedInformation>),
  },
} satisfies Members<InformationRequested>;

export const informationRequestedSchema = closed(
  'InformationRequested',
  'What the payer asks for before it decides a pended request (docs/payer-api.md, "More information requested")',
  informationRequested,
);
