/**
 * Two V8 heap snapshots of one process compared: what is new in the later one, by constructor and by
 * the older object that holds it. V8 keeps an object's snapshot id for its life, so "new" is an id the
 * earlier snapshot does not have. "Held by" walks the later heap breadth-first from its root over
 * strong edges; a new object is charged to the first older object on its way from the root, with the
 * edge leading out of it (a Map's table, an array's elements…). Hand-written (the snapshot format is
 * three flat arrays): @memlab/core parses snapshots and computes retained sizes, but installs Puppeteer
 * and a browser, which this project does not need.
 */
import { readFileSync } from 'node:fs';

interface SnapshotJson {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[]];
      edge_fields: string[];
      edge_types: [string[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

interface Heap {
  count: number;
  ids: Float64Array;
  selfSizes: Float64Array;
  classOf(node: number): string;
  /** Strong edges out of a node: [edge name, target node]. */
  forEachEdge(node: number, visit: (name: string, to: number) => void): void;
}

const readHeap = (file: string): Heap => {
  const json = JSON.parse(readFileSync(file, 'utf8')) as SnapshotJson;
  const { meta } = json.snapshot;
  const nodeWidth = meta.node_fields.length;
  const edgeWidth = meta.edge_fields.length;
  const [nodeTypes] = meta.node_types;
  const [edgeTypes] = meta.edge_types;
  const field = (name: string) => meta.node_fields.indexOf(name);
  const [typeAt, nameAt, idAt, sizeAt, edgesAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(field);
  const count = json.nodes.length / nodeWidth;
  const ids = new Float64Array(count);
  const selfSizes = new Float64Array(count);
  const firstEdge = new Uint32Array(count + 1);
  for (let node = 0, edge = 0; node < count; node++) {
    const at = node * nodeWidth;
    ids[node] = json.nodes[at + idAt!]!;
    selfSizes[node] = json.nodes[at + sizeAt!]!;
    firstEdge[node] = edge;
    edge += json.nodes[at + edgesAt!]! * edgeWidth;
    firstEdge[node + 1] = edge;
  }
  const classOf = (node: number) => {
    const type = nodeTypes[json.nodes[node * nodeWidth + typeAt!]!]!;
    const name = json.strings[json.nodes[node * nodeWidth + nameAt!]!]!;
    if (type === 'object' || type === 'native') return name.slice(0, 60);
    if (type === 'array' || type === 'hidden' || type === 'code' || type === 'synthetic')
      return `(${type}) ${name.slice(0, 40)}`;
    return type.includes('string') ? '(string)' : `(${type})`;
  };
  const forEachEdge = (node: number, visit: (name: string, to: number) => void) => {
    for (let edge = firstEdge[node]!; edge < firstEdge[node + 1]!; edge += edgeWidth) {
      const type = edgeTypes[json.edges[edge]!]!;
      if (type === 'weak' || type === 'shortcut') continue;
      const nameOrIndex = json.edges[edge + 1]!;
      const name = type === 'element' || type === 'hidden' ? '[]' : json.strings[nameOrIndex]!;
      visit(name, json.edges[edge + 2]! / nodeWidth);
    }
  };
  return { count, ids, selfSizes, classOf, forEachEdge };
};

export interface Growth {
  name: string;
  count: number;
  bytes: number;
}

export interface SnapshotComparison {
  before: { objects: number; bytes: number };
  after: { objects: number; bytes: number };
  /** Objects in the later snapshot that the earlier one does not have. */
  newObjects: { objects: number; bytes: number };
  /** Net change of count and self size, by constructor (or V8's kind of object). */
  byConstructor: Growth[];
  /** The new objects' self size, by the older object (constructor, edge) whose reference leads to them. */
  heldBy: Array<Growth & { holders: number; path: string }>;
}

const totals = (heap: Heap) => {
  let bytes = 0;
  for (let node = 0; node < heap.count; node++) bytes += heap.selfSizes[node]!;
  return { objects: heap.count, bytes };
};

const byConstructor = (before: Heap, after: Heap, top: number): Growth[] => {
  const growth = new Map<string, Growth>();
  const add = (heap: Heap, sign: number) => {
    for (let node = 0; node < heap.count; node++) {
      const name = heap.classOf(node);
      const entry = growth.get(name) ?? { name, count: 0, bytes: 0 };
      entry.count += sign;
      entry.bytes += sign * heap.selfSizes[node]!;
      growth.set(name, entry);
    }
  };
  add(after, 1);
  add(before, -1);
  return [...growth.values()].sort((a, b) => b.bytes - a.bytes).slice(0, top);
};

/** The path from the root to a node, along the breadth-first tree, as constructor and edge names. */
const pathTo = (heap: Heap, parents: Int32Array, edgeNames: string[], node: number) => {
  const steps: string[] = [];
  for (let at = node; at > 0 && steps.length < 12; at = parents[at]!) {
    steps.unshift(`${edgeNames[at]} → ${heap.classOf(at)}`);
  }
  return steps.join(' / ');
};

const heldBy = (before: Heap, after: Heap, top: number) => {
  const old = new Set<number>(before.ids);
  const parents = new Int32Array(after.count).fill(-1);
  const edgeNames: string[] = new Array(after.count);
  // For a new object: the older object it hangs from, and the label of that object's edge.
  const holder = new Int32Array(after.count).fill(-1);
  const label: string[] = new Array(after.count);
  const queue = new Int32Array(after.count);
  let head = 0;
  let tail = 0;
  queue[tail++] = 0;
  parents[0] = 0;
  while (head < tail) {
    const from = queue[head++]!;
    const fromIsOld = old.has(after.ids[from]!);
    after.forEachEdge(from, (name, to) => {
      if (parents[to] !== -1) return;
      parents[to] = from;
      edgeNames[to] = name;
      queue[tail++] = to;
      if (old.has(after.ids[to]!)) return;
      holder[to] = fromIsOld ? from : holder[from]!;
      label[to] = fromIsOld ? `${after.classOf(from)} .${name}` : label[from]!;
    });
  }
  const groups = new Map<string, Growth & { holderNodes: Map<number, number> }>();
  let newCount = 0;
  let newBytes = 0;
  for (let node = 0; node < after.count; node++) {
    if (old.has(after.ids[node]!)) continue;
    newCount++;
    newBytes += after.selfSizes[node]!;
    const name = holder[node] === -1 ? '(unreachable from the root: garbage or weakly held)' : label[node]!;
    const group = groups.get(name) ?? { name, count: 0, bytes: 0, holderNodes: new Map() };
    group.count++;
    group.bytes += after.selfSizes[node]!;
    group.holderNodes.set(holder[node]!, (group.holderNodes.get(holder[node]!) ?? 0) + after.selfSizes[node]!);
    groups.set(name, group);
  }
  const rows = [...groups.values()]
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top)
    .map(({ holderNodes, ...group }) => {
      const [biggest] = [...holderNodes.entries()].sort((a, b) => b[1] - a[1])[0]!;
      return {
        ...group,
        holders: holderNodes.size,
        path: biggest === -1 ? '' : pathTo(after, parents, edgeNames, biggest),
      };
    });
  return { newObjects: { objects: newCount, bytes: newBytes }, rows };
};

export const compareSnapshots = (beforeFile: string, afterFile: string, top = 15): SnapshotComparison => {
  const before = readHeap(beforeFile);
  const after = readHeap(afterFile);
  const { newObjects, rows } = heldBy(before, after, top);
  return {
    before: totals(before),
    after: totals(after),
    newObjects,
    byConstructor: byConstructor(before, after, top),
    heldBy: rows,
  };
};
