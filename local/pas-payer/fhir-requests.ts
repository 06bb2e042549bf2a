import type { IncomingMessage } from 'node:http';
import type { Bundle, OperationOutcomeIssue, Parameters } from '@medplum/fhirtypes';
import type { AnswerShape, RegisteredClient } from './clients.ts';
import { r4Errors } from './fhir-validation.ts';
import { mediaTypeOf, outcome, outcomeOf, parseJson, Refusal, readBody } from './http.ts';
import { inquiryProblems, mergeIssues, requestProblems } from './pas-constraints.ts';
import type { TokenStore } from './tokens.ts';

/*
 * What the two PAS operations share: the bearer token, the body (FHIR JSON, bounded), the Bundle checked
 * against R4 and PAS, and the answer in the client's shape. The operations themselves are in operations.ts.
 */

/** A client that presented a live token. */
export function clientOfBearer(
  req: IncomingMessage,
  tokens: TokenStore,
  client: (id: string) => RegisteredClient | undefined,
): RegisteredClient {
  const presented = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const grant = presented ? tokens.check(presented) : undefined;
  const found = grant && client(grant.clientId);
  if (found) return found;
  // RFC 6750 §3: no error code when no token was sent, invalid_token for an unknown or expired one.
  const challenge = presented ? 'Bearer realm="pas-payer", error="invalid_token"' : 'Bearer realm="pas-payer"';
  throw new Refusal(401, outcomeOf('login', 'A valid bearer token is required (POST /auth/token).'), {
    'www-authenticate': challenge,
  });
}

const invalid = (text: string, expression = ['Bundle']) => new Refusal(400, outcomeOf('invalid', text, expression));

/** The Bundle sent: bare, or as the `resource` parameter of Parameters (the OperationDefinition's input). */
async function bundleOf(req: IncomingMessage, maxBytes: number): Promise<Bundle> {
  const type = mediaTypeOf(req);
  if (type !== 'application/fhir+json' && type !== 'application/json') {
    throw new Refusal(415, outcomeOf('not-supported', 'Send the Bundle as application/fhir+json.'));
  }
  const tooLarge = () => new Refusal(413, outcomeOf('too-costly', `The body is larger than ${maxBytes} bytes.`));
  const body = parseJson(await readBody(req, maxBytes, tooLarge), (message) => invalid(message, []));
  const resource =
    (body as Parameters | null)?.resourceType === 'Parameters'
      ? (body as Parameters).parameter?.find((parameter) => parameter?.name === 'resource')?.resource
      : body;
  if (typeof resource !== 'object' || resource === null || (resource as Bundle).resourceType !== 'Bundle') {
    throw invalid('The body is a PAS Bundle (or Parameters with it as `resource`).');
  }
  return resource as Bundle;
}

/** The Bundle of a $submit ('request') or $inquire ('inquiry'), once it passes R4 and the PAS checks. */
export async function checkedBundle(
  req: IncomingMessage,
  kind: 'request' | 'inquiry',
  maxBytes: number,
): Promise<Bundle> {
  const bundle = await bundleOf(req, maxBytes);
  const pas = kind === 'request' ? requestProblems(bundle) : inquiryProblems(bundle);
  const issues: OperationOutcomeIssue[] = mergeIssues(await r4Errors(bundle, maxBytes), pas);
  if (issues.length > 0) throw new Refusal(400, outcome(issues));
  return bundle;
}

/**
 * An answer of zero or more Bundles in the client's shape: a bare Bundle (the newest; with none, an empty
 * collection), or Parameters with a `return` per Bundle (none: no parameter), as the OperationDefinition has it.
 */
export function shaped(shape: AnswerShape, bundles: Bundle[], empty: () => Bundle): Bundle | Parameters {
  if (shape === 'bundle') return bundles[0] ?? empty();
  return {
    resourceType: 'Parameters',
    ...(bundles.length > 0 ? { parameter: bundles.map((resource) => ({ name: 'return', resource })) } : {}),
  };
}
