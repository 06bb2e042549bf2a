import { NestedStack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { Route } from '#lib/routes/route-table';

const API_PREFIX = '/api/external/';
const VERSION = /^v\d+(\.\d+)?$/;

/**
 * The area of routes outside a version: the API's own description (the OpenAPI document, the reference page
 * and its script), which no client collection holds.
 */
export const DESCRIPTION_AREA = 'Description';

/**
 * A route's API area: the collection its path names after the version, e.g. `Requests` for
 * `/api/external/v1.1/Requests/{externalId}/Attachments` and for `/api/external/v1/Requests/{appointmentId}`,
 * `Portals` for both versions of the portal accounts, `ServiceReviews` for the automation routes. Read
 * from the URL, which the API's clients hold fixed, so a route never changes area and a new one lands in
 * its collection's (a new collection gets an area of its own) with nothing to list by hand.
 */
export const apiAreaOf = (route: Pick<Route, 'path'>): string => {
  if (!route.path.startsWith(API_PREFIX)) throw new Error(`Route ${route.path} is outside ${API_PREFIX}`);
  const [first, second] = route.path.slice(API_PREFIX.length).split('/');
  if (!VERSION.test(first ?? '')) return DESCRIPTION_AREA;
  // Construct ids and logical ids are made of it: a collection name as the API spells them.
  if (!/^[A-Z][A-Za-z0-9]*$/.test(second ?? '')) {
    throw new Error(`Route ${route.path}: "${second}" after the version is not a collection name (PascalCase)`);
  }
  return second!;
};

/** The nested stack's id, and its logical id in the API stack: `RequestsRoutes`. */
export const apiAreaStackId = (area: string) => `${area}Routes`;

/**
 * The functions of one API area's routes, each with its role, policies and log group: a nested stack of
 * the API stack, with CloudFormation's 500 resources of its own. The methods stay in the API stack, on
 * the one RestApi, where its deployment depends on every one of them (infra/api-stack.ts).
 */
export class ApiAreaStack extends NestedStack {
  readonly area: string;

  constructor(scope: Construct, area: string) {
    const id = apiAreaStackId(area);
    super(scope, id, { description: `Service review: the functions of the API's ${area} routes` });
    this.area = area;
    // Readable in the API stack's template and in the nested stack's name, instead of CDK's hashed id.
    this.nestedStackResource!.overrideLogicalId(id);
  }
}
