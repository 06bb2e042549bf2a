import type { SchemaName } from '#lib/validation/schema-names';
import type { Tag } from './tags.ts';

/**
 * The shape of what the document says of a route beyond its row (./operations.ts holds one per
 * handler): summary, tag, body, parameters, responses. lib/openapi/document.ts turns it into an
 * operation object.
 */
export type Header = 'ETag' | 'Location' | 'Set-Cookie' | 'Cache-Control';

export interface Outcome {
  description: string;
  /** A component schema's name, or `none` for an empty body. */
  body: string;
  mediaType?: string;
  headers?: readonly Header[];
}

export interface OperationDoc {
  summary: string;
  tag: Tag;
  /** One line at least: what the operation does beyond its summary (Redocly's operation-description). */
  description: string;
  /** The request body: JSON validated against a schema, any JSON, a merge patch, and/or multipart. */
  body?: {
    schema?: SchemaName;
    anyJson?: true;
    mergePatch?: true;
    multipart?: true;
    /** A FHIR resource (application/fhir+json, and application/json) described by this component schema. */
    fhir?: string;
    /** An absent body stands for `{}` (the RPA endpoints, which once took none). */
    optional?: true;
  };
  /** Query parameters: the members of this schema (validated as an object by the handler). */
  querySchema?: SchemaName;
  /** Other query parameters, free-standing. */
  query?: Record<string, string>;
  /** Path parameters whose name in the route table says less than the URL means. */
  pathDescriptions?: Record<string, string>;
  ifMatch?: true;
  ifNoneMatch?: true;
  idempotent?: true;
  /** A browser (Accept: text/html) gets its 200 and 401 as an HTML page. */
  browserPage?: true;
  outcomes: Record<number, Outcome>;
  /** Failures the handler answers besides the ones every route may meet. */
  failures?: readonly number[];
}
