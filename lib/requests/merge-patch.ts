const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Sets an own, enumerable member. `result[name] = value` would call Object.prototype's `__proto__`
 * setter for a member of that name (JSON.parse makes it an ordinary own member) and change the
 * prototype instead: the member would vanish and its contents would be inherited.
 */
const setMember = (result: Record<string, unknown>, name: string, value: unknown) =>
  Object.defineProperty(result, name, { value, writable: true, enumerable: true, configurable: true });

/**
 * JSON Merge Patch (RFC 7396): objects merge recursively, null deletes, anything else replaces.
 * Every member is an ordinary name, `__proto__`, `constructor` and `prototype` included; nothing
 * reads or changes a prototype. Recursion is as deep as the patch: bodies nest at most MAX_JSON_DEPTH.
 */
export const applyMergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return patch;
  // Spreading copies own members as own data members, `__proto__` included.
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else setMember(result, name, applyMergePatch(Object.hasOwn(result, name) ? result[name] : undefined, value));
  }
  return result;
};
