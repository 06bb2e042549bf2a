import type { Address, ContactPoint, HumanName } from '@medplum/fhirtypes';
import { type Fields, textOf } from './request-fields.ts';

/*
 * A person's or a provider's name, address and telecom, from the request's shared field names
 * (lib/validation/schemas/request.ts: `person`, `provider`).
 */

/** ZIP+4 with its hyphen, as FHIR writes it; PAS intermediaries remove it for X12 (prof-org-1, prof-sub-1). */
const postalCodeOf = (value: string | null): string | null =>
  value !== null && /^[0-9]{9}$/.test(value) ? `${value.slice(0, 5)}-${value.slice(5)}` : value;

export const addressOf = (fields: Fields): Address | undefined => {
  const line = [textOf(fields.addressLine1), textOf(fields.addressLine2)].filter((part) => part !== null);
  const address: Address = {
    ...(line.length > 0 ? { line } : {}),
    ...optional('city', textOf(fields.city)),
    ...optional('state', textOf(fields.stateCode)),
    ...optional('postalCode', postalCodeOf(textOf(fields.postalCode))),
    ...optional('country', textOf(fields.countryCode)),
  };
  return Object.keys(address).length > 0 ? address : undefined;
};

export const telecomOf = (fields: Fields): ContactPoint[] | undefined => {
  const telecom: ContactPoint[] = [];
  const phone = textOf(fields.phone);
  const fax = textOf(fields.fax);
  const email = textOf(fields.email);
  if (phone !== null) telecom.push({ system: 'phone', value: phone });
  if (fax !== null) telecom.push({ system: 'fax', value: fax });
  if (email !== null) telecom.push({ system: 'email', value: email });
  return telecom.length > 0 ? telecom : undefined;
};

/** A person's name; undefined when the request gives none of its parts. */
export const personNameOf = (fields: Fields): HumanName | undefined => {
  const given = [textOf(fields.firstName), textOf(fields.middleName)].filter((part) => part !== null);
  const family = textOf(fields.lastName);
  const suffix = textOf(fields.suffix);
  const name: HumanName = {
    ...(family !== null ? { family } : {}),
    ...(given.length > 0 ? { given } : {}),
    ...(suffix !== null ? { suffix: [suffix] } : {}),
  };
  return Object.keys(name).length > 0 ? name : undefined;
};

/** `{[key]: value}` when there is a value, `{}` when not: spread into a resource, an absent field stays absent. */
export const optional = <K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } =>
  (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

/** A one-element list of a value, or undefined: FHIR lists are absent rather than empty. */
export const listOf = <V>(value: V | undefined): V[] | undefined => (value === undefined ? undefined : [value]);
