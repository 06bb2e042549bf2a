import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import formats from '#lib/validation/formats';

/**
 * Checks an answer of the local stack against the OpenAPI document it serves, as an integrator's
 * tooling believes it: the status is documented for the operation, the body matches the schema of
 * that status and media type, and the headers the document marks `required` are there. The
 * integration tests' HTTP helper (api.ts) runs it on every response, so a drift between the server
 * and its document fails `npm test`. An answer to no documented operation (an unknown path, a
 * method a path does not have) must be the gateway's problem details.
 */
type Json = Record<string, unknown>;

interface Operation {
  pattern: RegExp;
  method: string;
  template: string;
  responses: Record<string, Json>;
}

export interface Conformance {
  /** The violations of one answer; empty when it conforms. */
  check(answer: Answer): string[];
}

export interface Answer {
  method: string;
  /** The path as sent (a query string is ignored). */
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

const DOCUMENT_ID = 'openapi.json';
const pointerOf = (...segments: string[]) =>
  segments.map((segment) => encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');

const operationsOf = (document: Json): Operation[] =>
  Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      template,
      method: method.toUpperCase(),
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}/?$`),
      responses: operation.responses as Record<string, Json>,
    })),
  );

const PROBLEM = 'application/problem+json';
const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

export const conformanceTo = (document: Json): Conformance => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  // The standard formats, and ours (npi) as the server checks them: a body the server would refuse fails here too.
  for (const [name, check] of Object.entries({ ...fullFormats, ...formats })) ajv.addFormat(name, check);
  ajv.addSchema(document, DOCUMENT_ID);
  const operations = operationsOf(document);
  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string) => {
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.getSchema(`${DOCUMENT_ID}#/${pointer}`);
      if (!validate) throw new Error(`the document has no schema at #/${pointer}`);
      validators.set(pointer, validate);
    }
    return validate;
  };

  const checkBody = (answer: Answer, at: string[], content: Json | undefined): string[] => {
    const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!content) return answer.text === '' ? [] : [`a body (${mediaType}) where the document promises none`];
    if (answer.text === '' && !mediaType) return [`no body where the document promises ${Object.keys(content)}`];
    if (!content[mediaType]) return [`Content-Type ${mediaType || '(none)'} is not one of ${Object.keys(content)}`];
    if (!isJson(mediaType)) return [];
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [`a ${mediaType} body that is not JSON`];
    }
    const validate = validatorAt(pointerOf(...at, 'content', mediaType, 'schema'));
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (error) => `body${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`,
    );
  };

  const checkHeaders = (answer: Answer, response: Json): string[] =>
    Object.entries((response.headers ?? {}) as Record<string, Json>)
      .filter(([name, header]) => header.required === true && !answer.headers.has(name))
      .map(([name]) => `the required header ${name} is missing`);

  /** No operation answers this method and path: the gateway refuses it with problem details. */
  const checkUndocumented = (answer: Answer): string[] => {
    const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (answer.status < 400) return [`${answer.status} from no documented operation`];
    if (mediaType !== PROBLEM) return [`${answer.status} from no documented operation is ${mediaType || 'empty'}`];
    const validate = validatorAt(pointerOf('components', 'schemas', 'ProblemDetails'));
    if (validate(JSON.parse(answer.text))) return [];
    return (validate.errors ?? []).map((error) => `body${error.instancePath} ${error.message}`);
  };

  return {
    check(answer) {
      const path = answer.path.split('?')[0]!;
      const onPath = operations.filter((operation) => operation.pattern.test(path));
      const operation = onPath.find((candidate) => candidate.method === answer.method.toUpperCase());
      if (!operation) return checkUndocumented(answer);
      const status = String(answer.status);
      const response = operation.responses[status] ?? operation.responses.default;
      if (!response) return [`${status} is not documented for ${operation.method} ${operation.template}`];
      const key = operation.responses[status] ? status : 'default';
      return [
        ...checkBody(
          answer,
          ['paths', operation.template, operation.method.toLowerCase(), 'responses', key],
          response.content as Json | undefined,
        ),
        ...checkHeaders(answer, response),
      ];
    },
  };
};
