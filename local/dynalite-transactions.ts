import { randomUUID } from 'node:crypto';
import { type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * DynamoDB transactions for dynalite, which has none (architect/dynalite#151; the pull request that
 * would add them, mhart/dynalite#143, was never merged; DynamoDB Local needs Java). Only the local
 * stack uses this: on AWS the same SDK calls reach DynamoDB itself.
 *
 * A transaction holds the table alone (single-item calls share a readers–writer gate and wait), then
 * applies its items one by one as the matching single-item calls, each with its condition and
 * `ReturnValues: ALL_OLD`; when one is refused, the ones before it are put back as they were and the
 * client gets DynamoDB's TransactionCanceledException with a reason per item. So no caller ever sees
 * half a transaction, and a refused one leaves nothing. Differences from DynamoDB, none of which a
 * caller of ours relies on: only the first refused item is reported (DynamoDB checks them all); a
 * crash of this process mid-transaction may leave it half applied; `ClientRequestToken` is ignored.
 */
type Json = Record<string, unknown>;
/** What dynalite answers to the single-item calls used here. */
interface Answer {
  Attributes?: Json;
  Item?: Json;
  Table?: { KeySchema: Array<{ AttributeName: string }> };
  __type?: string;
  message?: string;
  Message?: string;
}
/** One item of TransactWriteItems (Put, Update, Delete, ConditionCheck) or TransactGetItems (Get). */
interface ItemSpec extends Json {
  TableName: string;
  Key?: Json;
  Item?: Json;
  UpdateExpression?: string;
}
type TransactItem = Record<string, ItemSpec>;
type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const TARGET = 'DynamoDB_20120810.';
const MAX_ITEMS = 100;
const JSON_TYPE = 'application/x-amz-json-1.0';

/** Single-item calls share it; a transaction holds it alone. Writers are served before later readers. */
const readersWriterGate = () => {
  let readers = 0;
  let writer = false;
  const queue: Array<{ exclusive: boolean; start: () => void }> = [];
  const next = () => {
    while (queue.length && !writer) {
      const head = queue[0]!;
      if (head.exclusive && readers > 0) return;
      queue.shift();
      if (head.exclusive) writer = true;
      else readers++;
      head.start();
      if (head.exclusive) return;
    }
  };
  return async <T>(exclusive: boolean, work: () => Promise<T>): Promise<T> => {
    await new Promise<void>((start) => {
      queue.push({ exclusive, start });
      next();
    });
    try {
      return await work();
    } finally {
      if (exclusive) writer = false;
      else readers--;
      next();
    }
  };
};

class DynamoError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
    readonly extra: Json = {},
  ) {
    super(message);
  }
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const reply = (res: ServerResponse, status: number, body: Json) => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': JSON_TYPE,
    'Content-Length': Buffer.byteLength(text),
    'x-amzn-RequestId': randomUUID(),
  });
  res.end(text);
};

/** One single-item call to dynalite itself, past the gate (the transaction already holds it). */
const singleItemCall = (server: Server, bypass: string, signature: Record<string, string>) => {
  return (operation: string, input: Json): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify(input);
      const { port } = server.address() as AddressInfo;
      const call = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/',
          headers: {
            'content-type': JSON_TYPE,
            'x-amz-target': `${TARGET}${operation}`,
            ...signature,
            'x-local-transaction': bypass,
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const answer = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Answer;
            if ((res.statusCode ?? 500) < 300) return resolve(answer);
            const type = String(answer.__type ?? 'InternalServerError')
              .split('#')
              .pop()!;
            reject(new DynamoError(type, answer.message ?? answer.Message ?? type, res.statusCode));
          });
        },
      );
      call.on('error', reject);
      call.end(body);
    });
};

type Send = ReturnType<typeof singleItemCall>;

const EXPRESSION_MEMBERS = ['ConditionExpression', 'ExpressionAttributeNames', 'ExpressionAttributeValues'];
const pick = (source: Json, names: string[]) =>
  Object.fromEntries(names.filter((name) => source[name] !== undefined).map((name) => [name, source[name]]));

/** The table's key attributes, to name an item by its key (read once per table). */
const keyNamesOf = (send: Send) => {
  const known = new Map<string, string[]>();
  return async (table: string) => {
    let names = known.get(table);
    if (!names) {
      const { Table } = await send('DescribeTable', { TableName: table });
      names = (Table?.KeySchema ?? []).map((key) => key.AttributeName);
      known.set(table, names);
    }
    return names;
  };
};

interface Applied {
  table: string;
  key: Json;
  /** The item before this step, or undefined if there was none. */
  before: Json | undefined;
}

/** One transaction item as the single-item call that does it; a condition check writes the item back as it was. */
const applyItem = async (
  send: Send,
  keyOf: (table: string, item: Json) => Promise<Json>,
  entry: TransactItem,
): Promise<Applied & { checkOnly?: true }> => {
  const [kind, spec] = Object.entries(entry)[0]!;
  const key = spec.Key ?? {};
  const table = spec.TableName;
  const common = { TableName: table, ReturnValues: 'ALL_OLD', ...pick(spec, EXPRESSION_MEMBERS) };
  if (kind === 'Put') {
    const answer = await send('PutItem', { ...common, Item: spec.Item });
    return { table, key: await keyOf(table, spec.Item ?? {}), before: answer.Attributes };
  }
  if (kind === 'Update') {
    const answer = await send('UpdateItem', { ...common, Key: spec.Key, UpdateExpression: spec.UpdateExpression });
    return { table, key, before: answer.Attributes };
  }
  if (kind === 'Delete') {
    const answer = await send('DeleteItem', { ...common, Key: spec.Key });
    return { table, key, before: answer.Attributes };
  }
  if (kind === 'ConditionCheck') {
    const { Item } = await send('GetItem', { TableName: table, Key: spec.Key, ConsistentRead: true });
    await send('PutItem', { ...common, Item: Item ?? key });
    return { table, key, before: Item, checkOnly: true };
  }
  throw new DynamoError('ValidationException', `Unknown transaction item: ${kind}`);
};

const undo = async (send: Send, applied: Applied) => {
  if (applied.before) await send('PutItem', { TableName: applied.table, Item: applied.before });
  else await send('DeleteItem', { TableName: applied.table, Key: applied.key });
};

const validated = (input: Json): TransactItem[] => {
  const items = input.TransactItems;
  if (!Array.isArray(items) || items.length === 0 || items.length > MAX_ITEMS) {
    throw new DynamoError('ValidationException', `TransactItems must hold 1 to ${MAX_ITEMS} items`);
  }
  return items as TransactItem[];
};

const transactWrite = async (send: Send, keyNames: (table: string) => Promise<string[]>, input: Json) => {
  const items = validated(input);
  const keyOf = async (table: string, item: Json) => pick(item, await keyNames(table));
  const seen = new Set<string>();
  for (const entry of items) {
    const spec = Object.values(entry)[0]!;
    const key = JSON.stringify([spec.TableName, spec.Key ?? (await keyOf(spec.TableName, spec.Item ?? {}))]);
    if (seen.has(key)) {
      throw new DynamoError(
        'ValidationException',
        'Transaction request cannot include multiple operations on one item',
      );
    }
    seen.add(key);
  }
  const applied: Applied[] = [];
  let index = 0;
  try {
    for (; index < items.length; index++) {
      const step = await applyItem(send, keyOf, items[index]!);
      if (step.checkOnly) await undo(send, step);
      else applied.push(step);
    }
  } catch (error) {
    for (const step of applied.reverse()) await undo(send, step);
    if (error instanceof DynamoError && error.type === 'ConditionalCheckFailedException') {
      throw cancelled(items.length, index);
    }
    throw error;
  }
};

/** DynamoDB's answer to a refused transaction: one reason per item, in order. */
const cancelled = (count: number, refused: number) => {
  const reasons = Array.from({ length: count }, (_, i) =>
    i === refused ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' } : { Code: 'None' },
  );
  return new DynamoError(
    'TransactionCanceledException',
    `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    400,
    { CancellationReasons: reasons },
  );
};

const transactGet = async (send: Send, input: Json) => {
  const responses: Json[] = [];
  for (const entry of validated(input)) {
    const spec = entry.Get;
    if (!spec) throw new DynamoError('ValidationException', 'TransactGetItems takes Get items only');
    const { Item } = await send('GetItem', { ...spec, ConsistentRead: true });
    responses.push(Item ? { Item } : {});
  }
  return { Responses: responses };
};

/**
 * Adds TransactWriteItems and TransactGetItems to a dynalite server, before it listens. Every other
 * call goes to dynalite as before, through the gate.
 */
export const withTransactions = (server: Server): Server => {
  const dynalite = server.listeners('request')[0] as Listener;
  server.removeAllListeners('request');
  const gate = readersWriterGate();
  const bypass = randomUUID();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers['x-local-transaction'] === bypass) return dynalite(req, res);
    const target = String(req.headers['x-amz-target'] ?? '');
    if (target !== `${TARGET}TransactWriteItems` && target !== `${TARGET}TransactGetItems`) {
      void gate(
        false,
        () =>
          new Promise<void>((done) => {
            res.once('close', done);
            dynalite(req, res);
          }),
      );
      return;
    }
    // dynalite checks that a call is signed (not the signature itself): the caller's headers say so.
    const signature = Object.fromEntries(
      ['authorization', 'x-amz-date', 'date'].flatMap((name) => {
        const value = req.headers[name];
        return typeof value === 'string' ? [[name, value]] : [];
      }),
    );
    const send = singleItemCall(server, bypass, signature);
    const keyNames = keyNamesOf(send);
    void gate(true, async () => {
      try {
        const input = JSON.parse(await readBody(req)) as Json;
        if (target.endsWith('TransactWriteItems')) {
          await transactWrite(send, keyNames, input);
          reply(res, 200, {});
        } else reply(res, 200, await transactGet(send, input));
      } catch (error) {
        const failure =
          error instanceof DynamoError ? error : new DynamoError('InternalServerError', (error as Error).message, 500);
        reply(res, failure.status, {
          __type: `com.amazonaws.dynamodb.v20120810#${failure.type}`,
          message: failure.message,
          ...failure.extra,
        });
      }
    });
  });
  return server;
};
