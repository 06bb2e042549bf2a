import { TABLE_KEY, tableIndexes } from '#lib/table';

/*
 * Every item of the single table is declared once, as an entity: its key templates and how each
 * field of its domain record is stored. The key builders, item ↔ record mapping and the item's type
 * are derived from that declaration, so no key or attribute name is spelled twice. The declarations
 * are listed in docs/data-model.md, and test/unit/data-model.test.ts holds the two together.
 */

/**
 * How one record field is stored. `write` gives the item's value (undefined: the item has no such
 * attribute); `read` turns it back (it gets undefined when the item has no such attribute).
 */
export interface Attribute<Value, Stored = Value, Name extends string | undefined = undefined> {
  /** The item's attribute name, when it is not the record field's. */
  readonly storedAs: Name;
  readonly write: (value: Value) => Stored;
  // A method, not a property: its parameter is then bivariant, so an attribute of any stored type
  // fits Attribute<Value, unknown> (what a declaration is checked against) while Value stays exact.
  read(stored: Stored): Value;
}

const asIs = <T>(): Attribute<T> => ({ storedAs: undefined, write: (value) => value, read: (stored) => stored });

/** The attribute codecs a declaration is written with. */
export const attr = {
  /** A string; `T` narrows it to a union of literals (a status). */
  string: <T extends string = string>() => asIs<T>(),
  number: () => asIs<number>(),
  /** An object, stored as a DynamoDB map as it is. */
  map: <T extends object>() => asIs<T>(),
  list: <T>() => asIs<T[]>(),

  /** Stored as a JSON string, not a map: it reads back as written (key order, empty objects), with no type mapping. */
  json: <T>(): Attribute<T, string> => ({
    storedAs: undefined,
    write: (value) => JSON.stringify(value),
    read: (stored) => JSON.parse(stored),
  }),

  /** An optional field: undefined ↔ no attribute. */
  optional: <V, S, N extends string | undefined>(
    attribute: Attribute<V, S, N>,
  ): Attribute<V | undefined, S | undefined, N> => ({
    storedAs: attribute.storedAs,
    write: (value) => (value === undefined ? undefined : attribute.write(value)),
    read: (stored) => (stored === undefined ? undefined : attribute.read(stored)),
  }),

  /** A nullable field stored only when set: null ↔ no attribute. */
  nullAsAbsent: <V, S, N extends string | undefined>(
    attribute: Attribute<V, S, N>,
  ): Attribute<V | null, S | undefined, N> => ({
    storedAs: attribute.storedAs,
    write: (value) => (value === null || value === undefined ? undefined : attribute.write(value)),
    read: (stored) => (stored === undefined || stored === null ? null : attribute.read(stored)),
  }),

  /** An attribute that items written before it existed lack: they read as `fallback()`. */
  absentAs: <V, S, N extends string | undefined>(
    attribute: Attribute<V, S, N>,
    fallback: () => V,
  ): Attribute<V, S | undefined, N> => ({
    storedAs: attribute.storedAs,
    write: (value) => attribute.write(value),
    read: (stored) => (stored === undefined || stored === null ? fallback() : attribute.read(stored)),
  }),

  /** Stored under another name than the record field's. */
  storedAs: <Name extends string, V, S>(name: Name, attribute: Attribute<V, S>): Attribute<V, S, Name> => ({
    ...attribute,
    storedAs: name,
  }),
};

/** The key attributes of the table and of each index (names from lib/table.ts). */
type PrimaryKeyField = (typeof TABLE_KEY)['partition' | 'sort'];
type IndexKeyField = (typeof tableIndexes)[number]['partition' | 'sort'];
type KeyField = PrimaryKeyField | IndexKeyField;

/** The primary key of one item: what GetItem, DeleteItem and UpdateItem take. */
export type TableKey = Record<PrimaryKeyField, string>;

/** A key per key attribute: pk and sk always, an index's pair when the entity is in that index. */
type KeyTemplates = { readonly [F in PrimaryKeyField]: string } & { readonly [F in IndexKeyField]?: string };

/** The record fields named in a template's `<field>` slots. */
export type SlotsOf<Template extends string> = Template extends `${string}<${infer Field}>${infer Rest}`
  ? Field | SlotsOf<Rest>
  : never;

export interface KeyTemplate<Template extends string = string> {
  /** As declared, e.g. `CLIENT#<clientId>#REQ#<externalId>`: literal text and `<field>` slots. */
  readonly template: Template;
  readonly slots: readonly SlotsOf<Template>[];
  /** The text before the first slot: what every key of this template begins with. */
  readonly prefix: string;
  render(values: Readonly<Record<SlotsOf<Template>, string>>): string;
}

/** Slots are filled from string fields of the record only. */
type StringField<R> = { [F in keyof R]-?: R[F] extends string ? F : never }[keyof R];

const keyTemplate = <Template extends string>(template: Template): KeyTemplate<Template> => {
  // Odd indexes are slot names: 'CLIENT#<clientId>#REQ' → ['CLIENT#', 'clientId', '#REQ'].
  const parts = template.split(/<([^<>]+)>/);
  return {
    template,
    slots: parts.filter((_, i) => i % 2 === 1) as SlotsOf<Template>[],
    prefix: parts[0]!,
    render: (values) =>
      parts.map((part, i) => (i % 2 === 1 ? (values as Record<string, string>)[part] : part)).join(''),
  };
};

/** Every field of the record, each with an attribute of exactly its type. */
type AttributesOf<R> = { readonly [F in keyof Required<R>]: Attribute<R[F], unknown, string | undefined> };

type StoredName<Field, A> = A extends { readonly storedAs: infer Name extends string } ? Name : Field;
type StoredValue<A> = A extends { readonly write: (value: never) => infer Stored } ? Stored : never;

/** The item an entity writes: its keys, `entity`, its attributes under their stored names, the derived ones. */
type ItemOf<N extends string, K extends KeyTemplates, A, D extends string> = {
  readonly [F in keyof K]: string;
} & { readonly entity: N } & { readonly [F in keyof A as StoredName<F, A[F]>]: StoredValue<A[F]> } & {
  readonly [F in D]: unknown;
};

export interface Entity<R, N extends string, K extends KeyTemplates, A, D extends string> {
  /** The `entity` attribute of every item. */
  readonly name: N;
  readonly keys: { readonly [F in keyof K]-?: KeyTemplate<K[F] & string> };
  readonly attributes: A;
  /** Every attribute of its items but the keys: `entity`, each field's stored name, the derived ones. */
  readonly attributeNames: readonly string[];
  /** The primary key of the item that these field values name. */
  key(values: Readonly<Record<SlotsOf<K[PrimaryKeyField]>, string>>): TableKey;
  toItem(record: R): ItemOf<N, K, A, D>;
  /** The record of an item of this entity (items come back from DynamoDB untyped: not checked). */
  fromItem(item: Record<string, unknown>): R;
  /** Whether an item is one of this entity's (by its `entity` attribute). */
  matches(item: Record<string, unknown>): boolean;
}

/**
 * Declares the entity whose domain record is `R`:
 *
 *   defineEntity<StoredRequest>()({
 *     name: 'Request',
 *     keys: { pk: 'CLIENT#<clientId>#REQ#<externalId>', sk: 'REQUEST' },
 *     attributes: { clientId: attr.string(), document: attr.json<Record<string, unknown>>(), … },
 *   })
 *
 * The compiler holds the declaration to the record: every field declared, each with an attribute of
 * exactly its type, no other; every key slot a string field.
 */
export const defineEntity =
  <R>() =>
  <
    const N extends string,
    const K extends KeyTemplates,
    A extends AttributesOf<R>,
    const D extends string = never,
  >(declaration: {
    name: N;
    keys: K & {
      readonly [F in keyof K]: SlotsOf<K[F] & string> extends StringField<R> | (F extends IndexKeyField ? D : never)
        ? unknown
        : never;
    };
    attributes: A & { readonly [F in Exclude<keyof A, keyof R>]: never };
    /**
     * Attributes computed from the record on every write, never read back (a search copy, an index shard). An
     * index key may name one in a slot; the primary key may not, since `key()` is built from the record's ids.
     */
    derived?: { readonly [F in D]: (record: R) => unknown };
  }): Entity<R, N, K, A, D> => {
    const { name, attributes } = declaration;
    const templates = Object.entries(declaration.keys as K).map(([field, template]) => [
      field,
      keyTemplate(template as string),
    ]) as [KeyField, KeyTemplate][];
    const keys = Object.fromEntries(templates) as Record<KeyField, KeyTemplate>;
    for (const index of tableIndexes) {
      if (index.partition in keys !== index.sort in keys) throw new Error(`${name}: ${index.name} needs both its keys`);
    }
    const fields = Object.entries(attributes) as [string, Attribute<unknown, unknown, string | undefined>][];
    const derived = Object.entries<(record: R) => unknown>(declaration.derived ?? {});

    return {
      name,
      keys: keys as Entity<R, N, K, A, D>['keys'],
      attributes,
      attributeNames: [
        'entity',
        ...fields.map(([field, attribute]) => attribute.storedAs ?? field),
        ...derived.map(([field]) => field),
      ],
      key: (values) => ({
        [TABLE_KEY.partition]: keys[TABLE_KEY.partition].render(values),
        [TABLE_KEY.sort]: keys[TABLE_KEY.sort].render(values),
      }),
      toItem: (record) => {
        const values = record as Record<string, never>;
        const computed = Object.fromEntries(derived.map(([field, derive]) => [field, derive(record)]));
        const item: Record<string, unknown> = { entity: name };
        for (const [field, template] of templates) item[field] = template.render({ ...values, ...computed });
        for (const [field, attribute] of fields) {
          const stored = attribute.write(values[field]);
          if (stored !== undefined) item[attribute.storedAs ?? field] = stored;
        }
        Object.assign(item, computed);
        return item as ItemOf<N, K, A, D>;
      },
      fromItem: (item) => {
        const record: Record<string, unknown> = {};
        for (const [field, attribute] of fields) {
          const value = attribute.read(item[attribute.storedAs ?? field]);
          if (value !== undefined) record[field] = value;
        }
        return record as R;
      },
      matches: (item) => item.entity === name,
    };
  };
