import type {
  ClaimCareTeam,
  Identifier,
  Organization,
  Practitioner,
  PractitionerRole,
  Reference,
} from '@medplum/fhirtypes';
import { conceptOf, EXTENSIONS, SYSTEMS, X12 } from './codes.ts';
import { addressOf, listOf, optional, personNameOf, telecomOf } from './contact-details.ts';
import type { MappingContext } from './mapping-context.ts';
import { addProblem, type Fields, fieldsOf, isFields, requiredText, textOf } from './request-fields.ts';

/*
 * The requesting provider (Claim.provider: PASRequestor or PASPractitionerRole) and the rendering providers
 * (Claim.careTeam, scoped to the whole claim: PASOrganization or PASPractitionerRole). A provider the request
 * names by a person's name is a Practitioner in a PractitionerRole (the role carries its X12 entity code); one
 * named by an organization's name is an Organization. Resources are keyed by NPI, so a person who both
 * requests and renders is one Practitioner (spec-15).
 */

const NPI = /^[0-9]{10}$/;

const isPerson = (provider: Fields) => textOf(provider.lastName) !== null || textOf(provider.firstName) !== null;

/** The NPI, checked for its shape: an NPI we send is one the payer can look up. */
const npiOf = (mapping: MappingContext, provider: Fields, path: string, required: boolean): string | null => {
  const npi = textOf(provider.npi);
  if (npi === null && required) addProblem(mapping, `${path}/npi`, 'missing', `the ${nameOf(path)}'s NPI is needed`);
  if (npi !== null && !NPI.test(npi)) {
    addProblem(mapping, `${path}/npi`, 'unmappable', `the ${nameOf(path)}'s NPI is not 10 digits`);
    return null;
  }
  return npi;
};

const nameOf = (path: string) => (path === '/requestingProvider' ? 'requesting provider' : 'rendering provider');

const npiIdentifier = (npi: string | null): Identifier[] => (npi !== null ? [{ system: SYSTEMS.npi, value: npi }] : []);

/** An organization, with its TIN when given (X12 REF*EI; PASOrganization's TIN slice). */
const organizationOf = (provider: Fields, npi: string | null, role: string | null): Organization => {
  const tin = textOf(provider.taxId);
  const identifier = [...npiIdentifier(npi), ...(tin !== null ? [{ system: SYSTEMS.ein, value: tin }] : [])];
  return {
    resourceType: 'Organization',
    active: true,
    ...(identifier.length > 0 ? { identifier } : {}),
    ...optional('type', role !== null ? [conceptOf(X12.entityIdentifier, role)] : null),
    ...optional('name', textOf(provider.organizationName)),
    ...optional('address', listOf(addressOf(provider))),
    ...optional('telecom', telecomOf(provider)),
  };
};

/** A person: their Practitioner (once per NPI) in a role of theirs, at their organization when named. */
const practitionerRoleOf = (
  mapping: MappingContext,
  provider: Fields,
  path: string,
  npi: string | null,
): Reference<PractitionerRole> => {
  const practitioner: Practitioner = {
    resourceType: 'Practitioner',
    ...(npi !== null ? { identifier: npiIdentifier(npi) } : {}),
    ...optional('name', listOf(personNameOf(provider))),
    ...optional('address', listOf(addressOf(provider))),
  };
  const practitionerReference = mapping.entries.add(`practitioner:${npi ?? path}`, practitioner);
  const organization =
    textOf(provider.organizationName) !== null
      ? mapping.entries.add(`organization:${path}`, organizationOf(provider, null, null))
      : undefined;
  const role = textOf(provider.roleCode);
  const specialty = textOf(provider.specialtyCode);
  const practitionerRole: PractitionerRole = {
    resourceType: 'PractitionerRole',
    active: true,
    practitioner: practitionerReference,
    ...optional('organization', organization),
    ...optional('code', role !== null ? [conceptOf(X12.entityIdentifier, role)] : null),
    ...optional('specialty', specialty !== null ? [conceptOf(SYSTEMS.nuccTaxonomy, specialty)] : null),
    ...optional('telecom', telecomOf(provider)),
  };
  return mapping.entries.add(`role:${path}`, practitionerRole);
};

type ProviderReference = Reference<PractitionerRole | Organization>;

/** The provider's resource: a PractitionerRole for a person, an Organization otherwise. */
const providerOf = (
  mapping: MappingContext,
  provider: Fields,
  path: string,
  npiRequired: boolean,
): ProviderReference => {
  const npi = npiOf(mapping, provider, path, npiRequired);
  if (textOf(provider.lastName) === null && textOf(provider.organizationName) === null) {
    addProblem(
      mapping,
      `${path}/lastName`,
      'missing',
      `the ${nameOf(path)}'s name (lastName or organizationName) is needed`,
    );
  }
  requiredText(mapping, provider, `${path}/roleCode`, `the ${nameOf(path)}'s role code is needed`);
  if (isPerson(provider)) return practitionerRoleOf(mapping, provider, path, npi);
  const organization = organizationOf(provider, npi, textOf(provider.roleCode));
  return mapping.entries.add(`organization:${npi ?? path}`, organization);
};

/** Claim.provider: the requester, whose NPI is the inquiry's key besides the member id (spec-53). */
export const mapRequester = (mapping: MappingContext): ProviderReference =>
  providerOf(mapping, fieldsOf(mapping.document.requestingProvider), '/requestingProvider', true);

/** Claim.careTeam: each rendering provider, for the whole claim; its NPI is sent when the request gives it. */
export const mapCareTeam = (mapping: MappingContext): ClaimCareTeam[] => {
  const providers = mapping.document.renderingProviders;
  if (!Array.isArray(providers)) return [];
  return providers.flatMap((value, index): ClaimCareTeam[] => {
    const path = `/renderingProviders/${index}`;
    if (!isFields(value)) {
      addProblem(mapping, path, 'unmappable', 'a rendering provider is not an object');
      return [];
    }
    const role = textOf(value.roleCode);
    const specialty = textOf(value.specialtyCode);
    return [
      {
        id: path,
        extension: [{ url: EXTENSIONS.careTeamClaimScope, valueBoolean: true }],
        sequence: index + 1,
        provider: providerOf(mapping, value, path, false),
        ...optional('role', role !== null ? conceptOf(X12.entityIdentifier, role) : null),
        ...optional('qualification', specialty !== null ? conceptOf(SYSTEMS.nuccTaxonomy, specialty) : null),
      },
    ];
  });
};
