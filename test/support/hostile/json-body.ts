import fc from 'fast-check';

/**
 * Bodies of the hostile-input suite as values: JSON values, plus raw JSON text for what JSON.stringify cannot
 * write (1e400, 41-digit integers, 10,000 levels), and the mutations that break a valid body at a JSON path
 * of it. Cases print as one line (fast-check shows them as counterexamples), never as the megabytes they carry.
 * Objects may own a `__proto__` member, as JSON.parse makes them.
 */

export class RawJson {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}
}

export type Body = null | boolean | number | string | RawJson | Body[] | { [name: string]: Body };

/** Stands for the case's id in fixtures; replaced in the JSON text when a case is sent. */
export const ID = '@@id@@';

const isObject = (value: Body | undefined): value is { [name: string]: Body } =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RawJson);

export const jsonText = (value: Body): string => {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .map((name) => `${JSON.stringify(name)}:${jsonText(value[name]!)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
};

/** A copy with an own member `name`, even when the name is `__proto__`. */
export const withMember = (object: { [name: string]: Body }, name: string, value: Body) => {
  const copy = { ...object };
  Object.defineProperty(copy, name, { value, enumerable: true, writable: true, configurable: true });
  return copy;
};

const label = (value: Body | undefined): string => {
  if (value === undefined) return 'nothing';
  if (value instanceof RawJson) return value.label;
  if (typeof value === 'string') {
    return value.length <= 24
      ? JSON.stringify(value)
      : `${JSON.stringify(value.slice(0, 16))}… (${value.length} chars)`;
  }
  if (Array.isArray(value)) {
    if (value.length > 3) return `[${value.length} × ${label(value[0])}]`;
    return `[${value.map(label).join(', ')}]`;
  }
  if (isObject(value)) {
    const names = Object.keys(value);
    const shown = names.slice(0, 3).map((name) => `${JSON.stringify(name)}: ${label(value[name])}`);
    return `{${shown.join(', ')}${names.length > 3 ? `, … ${names.length} members` : ''}}`;
  }
  return JSON.stringify(value);
};

/** Every string in a body longer than an error text may quote (100 characters). */
export const longStrings = (value: Body, found: string[] = []): string[] => {
  if (typeof value === 'string' && value.length > 100) found.push(value);
  else if (Array.isArray(value)) for (const item of value.slice(0, 5)) longStrings(item, found);
  else if (isObject(value)) for (const name of Object.keys(value)) longStrings(value[name]!, found);
  return found;
};

/** Write-only values of a body (passwords, TOTP seeds): never in any answer. */
export const secretsOf = (value: Body, found: string[] = []): string[] => {
  if (Array.isArray(value)) for (const item of value) secretsOf(item, found);
  else if (isObject(value)) {
    for (const name of Object.keys(value)) {
      const member = value[name]!;
      if ((name === 'password' || name === 'totpSecret') && typeof member === 'string' && member.length >= 8) {
        found.push(member);
      } else secretsOf(member, found);
    }
  }
  return found;
};

/* ------------------------------------------------------------------------------------------------
 * Mutations of a valid body, at a JSON path of it. On a path an earlier mutation removed, a change
 * applies to its deepest remaining part and a removal does nothing.
 */

export type Step = string | number;
export interface Mutation {
  label: string;
  apply: (body: Body) => Body;
}

const REMOVE = Symbol('remove');
const pointer = (path: Step[]) => (path.length ? path.map((step) => `/${step}`).join('') : '/');

const update = (node: Body, path: Step[], change: (value: Body) => Body | typeof REMOVE): Body => {
  const [step, ...rest] = path;
  const exists =
    step !== undefined &&
    ((Array.isArray(node) && typeof step === 'number' && step < node.length) ||
      (isObject(node) && Object.hasOwn(node, step)));
  if (!exists) {
    const changed = change(node);
    return changed === REMOVE ? node : changed;
  }
  const child = (node as Record<Step, Body>)[step]!;
  const changed = rest.length === 0 ? change(child) : update(child, rest, change);
  if (Array.isArray(node)) {
    const copy = [...node];
    if (changed === REMOVE) copy.splice(step as number, 1);
    else copy[step as number] = changed;
    return copy;
  }
  if (changed === REMOVE) {
    const copy = { ...(node as { [name: string]: Body }) };
    delete copy[step as string];
    return copy;
  }
  return withMember(node as { [name: string]: Body }, step as string, changed);
};

const pathsOf = (value: Body, prefix: Step[] = []): Step[][] => {
  const paths = [prefix];
  if (Array.isArray(value)) for (const [i, item] of value.entries()) paths.push(...pathsOf(item, [...prefix, i]));
  else if (isObject(value))
    for (const name of Object.keys(value)) paths.push(...pathsOf(value[name]!, [...prefix, name]));
  return paths;
};

const nodeAt = (value: Body, path: Step[]) => {
  let node: Body | undefined = value;
  for (const step of path) node = (node as Record<Step, Body>)[step];
  return node;
};

/**
 * Where in a fixture to mutate. Half the picks fall under `focus` when given: members the service
 * stores as sent (a wrong value there is kept, not refused), where what is stored must be what was sent.
 */
export const placesOf = (fixture: Body, focus: Step[][] = []) => {
  const all = pathsOf(fixture);
  const pick = (paths: Step[][]) => {
    const focused = paths.filter((path) => focus.some((top) => top.every((step, i) => path[i] === step)));
    return focused.length
      ? fc.oneof(fc.constantFrom(...paths), fc.constantFrom(...focused))
      : fc.constantFrom(...paths);
  };
  const containers = all.filter((path) => {
    const node = nodeAt(fixture, path);
    return isObject(node) || Array.isArray(node);
  });
  const objects = containers.filter((path) => isObject(nodeAt(fixture, path)));
  return {
    any: pick(all),
    containers: pick(containers),
    objects: pick(objects),
    members: all.length > 1 ? pick(all.slice(1)) : undefined,
    arrays: all.filter((path) => Array.isArray(nodeAt(fixture, path))),
  };
};

export const replaceAt = (path: Step[], value: Body): Mutation => ({
  label: `set ${pointer(path)} to ${label(value)}`,
  apply: (body) => update(body, path, () => value),
});

export const removeAt = (path: Step[]): Mutation => ({
  label: `remove ${pointer(path)}`,
  apply: (body) => update(body, path, () => REMOVE),
});

export const addAt = (path: Step[], name: string, value: Body): Mutation => ({
  label: `add ${JSON.stringify(name)}: ${label(value)} to ${pointer(path)}`,
  apply: (body) =>
    update(body, path, (node) =>
      Array.isArray(node) ? [...node, value] : withMember(isObject(node) ? node : {}, name, value),
    ),
});

export type NestingShape = 'arrays' | 'objects' | '__proto__ objects';

export const nested = (depth: number, shape: NestingShape, inner: string): string => {
  if (shape === 'arrays') return `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
  const open = shape === 'objects' ? '{"a":' : '{"__proto__":';
  return `${open.repeat(depth)}${inner}${'}'.repeat(depth)}`;
};

export const nestAt = (path: Step[], depth: number, shape: NestingShape): Mutation => ({
  label: `nest ${pointer(path)} ${depth} levels deep in ${shape}`,
  apply: (body) =>
    update(body, path, (node) => new RawJson(nested(depth, shape, jsonText(node)), `${depth} levels of ${shape}`)),
});

/** A body made of mutations of a fixture; prints as the list of mutations. */
export class BodyCase {
  readonly body: Body;
  constructor(
    fixture: Body,
    readonly mutations: Mutation[],
  ) {
    this.body = mutations.reduce((body, mutation) => mutation.apply(body), fixture);
  }
  [fc.toStringMethod]() {
    return this.mutations.map((mutation) => mutation.label).join('; ');
  }
}
