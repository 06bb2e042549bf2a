/**
 * A look inside dynalite's storage (abstract-level, one copy for its in-memory and on-disk stores), for the
 * memory benches and tests: the iterators opened and not closed since it was installed, and the bytes stored.
 */
import { createRequire } from 'node:module';

interface LevelDatabase {
  iterator(options: { keyEncoding: 'buffer'; valueEncoding: 'buffer' }): AsyncIterable<[Buffer, Buffer]>;
}

export interface LevelStore {
  /** Storage iterators attached to a database and not yet detached (abstract-level tracks them for close()). */
  readonly openIterators: number;
  /** Entries and their key and value bytes, by dynalite's sub-database (`item-<table>`, `index-global~…`). */
  stored(): Promise<Record<string, { entries: number; bytes: number }>>;
}

export const watchLevelStore = (): LevelStore => {
  const { AbstractLevel } = createRequire(import.meta.url)('abstract-level');
  let open = 0;
  const databases = new Set<LevelDatabase>();
  const { attachResource, detachResource } = AbstractLevel.prototype;
  AbstractLevel.prototype.attachResource = function (resource: unknown) {
    open++;
    databases.add(this);
    return attachResource.call(this, resource);
  };
  AbstractLevel.prototype.detachResource = function (resource: unknown) {
    open--;
    return detachResource.call(this, resource);
  };
  const stored = async () => {
    const bySubDatabase: Record<string, { entries: number; bytes: number }> = {};
    for (const db of databases) {
      // for await closes the iterator when done, unlike dynalite's streams.
      for await (const [key, value] of db.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer' })) {
        const parts = key.toString('utf8').split('~');
        const name = parts.slice(0, parts[0]!.startsWith('index-') ? 3 : 1).join('~');
        const entry = bySubDatabase[name] ?? { entries: 0, bytes: 0 };
        bySubDatabase[name] = entry;
        entry.entries++;
        entry.bytes += key.length + value.length;
      }
    }
    return bySubDatabase;
  };
  return {
    get openIterators() {
      return open;
    },
    stored,
  };
};
