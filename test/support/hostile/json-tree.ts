/**
 * JSON by value, for the hostile-input suite's read-back checks. Parsed without recursion (bodies nest 10,000
 * deep), objects as Maps (so `__proto__` is a key like any other), numbers as exact decimals (so 1e400 is not
 * Infinity and a 41-digit integer keeps its digits).
 */

export type JsonTree =
  | { t: 'object'; members: Map<string, JsonTree> }
  | { t: 'array'; items: JsonTree[] }
  | { t: 'string'; value: string }
  | { t: 'number'; value: string }
  | { t: 'literal'; value: boolean | null };

/** A number literal's exact value: `-1.50e2` → `-15e1`; every zero → `0`. */
const exactNumber = (source: string): string => {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(source);
  if (!match) throw new SyntaxError(`not a JSON number: ${source}`);
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const allDigits = `${whole}${fraction}`.replace(/^0+/, '');
  if (allDigits === '') return '0';
  const digits = allDigits.replace(/0+$/, '');
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(allDigits.length - digits.length);
  return `${sign}${digits}e${scale}`;
};

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings exclude exactly these characters.
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

type Frame = { node: Extract<JsonTree, { t: 'object' }>; key: string } | { node: Extract<JsonTree, { t: 'array' }> };

export const parseJsonTree = (text: string): JsonTree => {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxError(`not JSON at position ${at}`);
  };
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const token = (pattern: RegExp) => {
    pattern.lastIndex = at;
    const match = pattern.exec(text) ?? fail();
    at = pattern.lastIndex;
    return match[0];
  };
  const key = () => {
    skip();
    const name = JSON.parse(token(STRING)) as string;
    skip();
    if (text[at++] !== ':') fail();
    return name;
  };
  const frames: Frame[] = [];
  for (;;) {
    skip();
    let value: JsonTree;
    const char = text[at];
    if (char === '{' || char === '[') {
      at++;
      skip();
      const node: JsonTree = char === '{' ? { t: 'object', members: new Map() } : { t: 'array', items: [] };
      if (text[at] === (char === '{' ? '}' : ']')) {
        at++;
        value = node;
      } else {
        frames.push(node.t === 'object' ? { node, key: key() } : { node });
        continue;
      }
    } else if (char === '"') value = { t: 'string', value: JSON.parse(token(STRING)) };
    else if (text.startsWith('true', at)) value = { t: 'literal', value: true };
    else if (text.startsWith('false', at)) value = { t: 'literal', value: false };
    else if (text.startsWith('null', at)) value = { t: 'literal', value: null };
    else value = { t: 'number', value: exactNumber(token(NUMBER)) };
    if (value.t === 'literal') at += String(value.value).length;
    // Hand the value to its container, closing every container that ends here.
    for (;;) {
      const frame = frames.at(-1);
      if (!frame) {
        skip();
        if (at !== text.length) fail();
        return value;
      }
      if (frame.node.t === 'object') frame.node.members.set((frame as { key: string }).key, value);
      else frame.node.items.push(value);
      skip();
      if (text[at] === ',') {
        at++;
        if (frame.node.t === 'object') (frame as { key: string }).key = key();
        break;
      }
      if (text[at++] !== (frame.node.t === 'object' ? '}' : ']')) fail();
      frames.pop();
      value = frame.node;
    }
  }
};

export const shorten = (text: string, max = 160) =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;

const describeTree = (tree: JsonTree | undefined): string => {
  if (!tree) return 'nothing';
  if (tree.t === 'object') return `an object of ${tree.members.size} members`;
  if (tree.t === 'array') return `an array of ${tree.items.length}`;
  if (tree.t === 'number') return `the number ${shorten(tree.value, 50)}`;
  if (tree.t === 'string') return `the string ${shorten(JSON.stringify(tree.value), 50)}`;
  return String(tree.value);
};

const pointerStep = (name: string | number) => `/${String(name).replaceAll('~', '~0').replaceAll('/', '~1')}`;

/** The first difference between two documents (member order aside), or undefined when they are equal. */
export const differenceOf = (expected: JsonTree, actual: JsonTree, expectedAs = 'sent'): string | undefined => {
  const pending: [JsonTree | undefined, JsonTree | undefined, string][] = [[expected, actual, '']];
  while (pending.length > 0) {
    const [want, got, pointer] = pending.pop()!;
    const where = pointer || '/';
    const differs = () => `${where}: ${expectedAs} ${describeTree(want)}, stored ${describeTree(got)}`;
    if (!want || !got || want.t !== got.t) return differs();
    if (want.t === 'object' && got.t === 'object') {
      for (const name of new Set([...want.members.keys(), ...got.members.keys()])) {
        pending.push([want.members.get(name), got.members.get(name), pointer + pointerStep(name)]);
      }
    } else if (want.t === 'array' && got.t === 'array') {
      if (want.items.length !== got.items.length)
        return `${where}: sent ${describeTree(want)}, stored ${describeTree(got)}`;
      for (const [i, item] of want.items.entries()) pending.push([item, got.items[i], pointer + pointerStep(i)]);
    } else if ((want as { value: unknown }).value !== (got as { value: unknown }).value) {
      return differs();
    }
  }
  return undefined;
};

/** RFC 7396 as written: every member name is data, `__proto__` included. */
export const mergePatch = (target: JsonTree, patch: JsonTree): JsonTree => {
  if (patch.t !== 'object') return patch;
  const copy = (tree: JsonTree | undefined): Extract<JsonTree, { t: 'object' }> => ({
    t: 'object',
    members: tree?.t === 'object' ? new Map(tree.members) : new Map(),
  });
  const result = copy(target);
  const pending: [Extract<JsonTree, { t: 'object' }>, Extract<JsonTree, { t: 'object' }>][] = [[result, patch]];
  while (pending.length > 0) {
    const [into, from] = pending.pop()!;
    for (const [name, value] of from.members) {
      if (value.t === 'literal' && value.value === null) into.members.delete(name);
      else if (value.t === 'object') {
        const child = copy(into.members.get(name));
        into.members.set(name, child);
        pending.push([child, value]);
      } else into.members.set(name, value);
    }
  }
  return result;
};

/** The tree without the members the service adds to a representation. */
export const withoutMembers = (tree: JsonTree, names: string[]): JsonTree => {
  if (tree.t !== 'object') return tree;
  const members = new Map(tree.members);
  for (const name of names) members.delete(name);
  return { t: 'object', members };
};

export const memberOf = (tree: JsonTree, name: string): JsonTree | undefined =>
  tree.t === 'object' ? tree.members.get(name) : undefined;
