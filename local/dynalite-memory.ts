import { createRequire } from 'node:module';

/**
 * What dynalite 4's storage keeps in memory, brought down to what is stored. Two faults made a
 * long-running local stack grow by several KB per request (docs/local-stack.md, "Memory"):
 *
 * - Open iterators. dynalite reads every Query and Scan through a stream over a storage iterator and
 *   ends the stream by calling the iterator's `return()`, which the iterators of abstract-level 3 do not
 *   have (they have `close()`): none was ever closed. Each stayed registered with its database, with the
 *   version of the in-memory tree it started on, so every item version overwritten after it stayed too;
 *   on disk (`.local/`), LevelDB's native iterator and what it pins. Iterators get a `return()` that closes.
 * - Pooled bytes. memory-level keeps each key and value as the Buffer it was handed, and a Buffer under
 *   4 KB is a slice of one of Node's shared 8 KB pool slabs, which lives while any slice of it does: an
 *   entry of a few hundred bytes kept up to two slabs alive. Entries are stored as copies of their own.
 */

const patched = Symbol('service-review dynalite memory');

interface IteratorPrototype {
  close(): Promise<void>;
  return?: () => Promise<void>;
}

interface PutOperation {
  type: 'put' | 'del';
  key: unknown;
  value?: unknown;
}

interface MemoryLevelPrototype {
  [patched]?: true;
  _put(key: unknown, value: unknown, options: unknown): Promise<void>;
  _batch(operations: PutOperation[], options: unknown): Promise<void>;
}

const fromDynalite = () => createRequire(createRequire(import.meta.url).resolve('dynalite'));

/** abstract-level as dynalite's stores load it: the in-memory one, and the on-disk one of `.local/`. */
const abstractLevels = () => {
  const dynalite = fromDynalite();
  const level = createRequire(dynalite.resolve('level'));
  const stores = [dynalite.resolve('memory-level'), level.resolve('classic-level')];
  return new Set(stores.map((store) => createRequire(store)('abstract-level')));
};

const closeIteratorsOnReturn = () => {
  for (const level of abstractLevels()) {
    for (const { prototype } of [
      level.AbstractIterator,
      level.AbstractKeyIterator,
      level.AbstractValueIterator,
    ] as Array<{
      prototype: IteratorPrototype;
    }>) {
      if (typeof prototype.return === 'function') continue;
      Object.defineProperty(prototype, 'return', {
        value: function (this: IteratorPrototype) {
          return this.close();
        },
        configurable: true,
        writable: true,
      });
    }
  }
};

/** A Buffer that shares its memory (a pool slab) copied into memory of its own; anything else as is. */
const owned = (bytes: unknown) => {
  if (!Buffer.isBuffer(bytes) || bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
  bytes.copy(copy);
  return copy;
};

const storeOwnedBytes = () => {
  const { MemoryLevel } = fromDynalite()('memory-level') as { MemoryLevel: { prototype: MemoryLevelPrototype } };
  const { prototype } = MemoryLevel;
  if (prototype[patched]) return;
  const { _put: put, _batch: batch } = prototype;
  prototype._put = function (key, value, options) {
    return put.call(this, owned(key), owned(value), options);
  };
  prototype._batch = function (operations, options) {
    const copies = operations.map((op) =>
      op.type === 'put' ? { ...op, key: owned(op.key), value: owned(op.value) } : op,
    );
    return batch.call(this, copies, options);
  };
  prototype[patched] = true;
};

/** Before dynalite opens its store. Idempotent. */
export const boundDynaliteMemory = () => {
  closeIteratorsOnReturn();
  storeOwnedBytes();
};
