import { describe, expect, it } from 'vitest';
import * as aliased from '#lib/aws/node-http';

/*
 * lib/aws/node-http.ts, which deployed bundles get for `node:http` (BUNDLING's alias): the module that
 * Node's CommonJS loader holds, with its public exports by name, so an importer sees what it would
 * have seen; and not the undici getters, whose loading the alias is there to avoid.
 */
const http = process.getBuiltinModule('node:http');
const UNDICI_GETTERS = ['WebSocket', 'CloseEvent', 'MessageEvent'];

describe('node:http as aliased in deployed bundles', () => {
  it('is the module itself, and names each of its public exports', () => {
    expect(aliased.default).toBe(http);
    const publicNames = Object.keys(http).filter((name) => !name.startsWith('_') && !UNDICI_GETTERS.includes(name));
    const exported = Object.fromEntries(Object.entries(aliased).filter(([name]) => name !== 'default'));
    expect(Object.keys(exported).sort()).toEqual(publicNames.sort());
    for (const name of publicNames) expect(exported[name]).toBe(http[name as keyof typeof http]);
  });

  it('leaves out the getters that load undici', () => {
    expect(UNDICI_GETTERS.filter((name) => name in aliased)).toEqual([]);
  });
});
