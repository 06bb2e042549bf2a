import { randomUUID } from 'node:crypto';
import { startExecution } from './executions.ts';
import { withoutData } from './history.ts';
import { type Emulator, type Execution, epochSeconds, executionArnOf, ServiceError } from './model.ts';

/* The operations of the JSON 1.0 protocol (`X-Amz-Target: AWSStepFunctions.<Op>`), as AWS answers them. */

/** An operation's JSON request; each operation checks the members it reads. */
export type RequestBody = Record<string, unknown>;

/** AWS's limits on StartExecution's name (1–80 characters, none of these) and input (256 KiB). */
const INVALID_NAME = /[\s<>{}[\]?*"#%\\^|~`$&,;:/]|\p{Cc}/u;
const MAX_INPUT_BYTES = 256 * 1024;

function machineFor(em: Emulator, arn: unknown) {
  if (typeof arn !== 'string' || !arn.startsWith('arn:aws:states:'))
    throw new ServiceError('InvalidArn', `Invalid Arn: '${arn}'`);
  const machine = em.machines.get(arn);
  if (!machine) throw new ServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
  return machine;
}

function executionFor(em: Emulator, arn: unknown) {
  if (typeof arn !== 'string' || !arn.startsWith('arn:aws:states:'))
    throw new ServiceError('InvalidArn', `Invalid Arn: '${arn}'`);
  const execution = em.executions.get(arn);
  if (!execution) throw new ServiceError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
  return execution;
}

const summaryOf = (execution: Execution) => ({
  executionArn: execution.executionArn,
  stateMachineArn: execution.stateMachineArn,
  name: execution.name,
  status: execution.status,
  startDate: epochSeconds(execution.startDate),
  ...(execution.stopDate ? { stopDate: epochSeconds(execution.stopDate) } : {}),
});

function page<T>(items: T[], maxResults: unknown, nextToken: unknown, fallback: number) {
  const offset = typeof nextToken === 'string' ? Number.parseInt(nextToken, 10) : 0;
  if (!Number.isInteger(offset) || offset < 0) throw new ServiceError('InvalidToken', 'Invalid token');
  const size = typeof maxResults === 'number' && maxResults > 0 ? Math.min(maxResults, 1000) : fallback;
  const next = offset + size < items.length ? String(offset + size) : undefined;
  return { items: items.slice(offset, offset + size), ...(next ? { nextToken: next } : {}) };
}

function startExecutionOperation(em: Emulator, body: RequestBody): unknown {
  const machine = machineFor(em, body.stateMachineArn);
  const name = body.name ?? randomUUID();
  if (typeof name !== 'string' || name.length < 1 || name.length > 80 || INVALID_NAME.test(name)) {
    throw new ServiceError('InvalidName', `Invalid Name: '${name}'`);
  }
  const input = body.input ?? '{}';
  if (typeof input !== 'string' || Buffer.byteLength(input) > MAX_INPUT_BYTES) {
    throw new ServiceError('InvalidExecutionInput', 'Invalid execution input: at most 256 KiB of JSON');
  }
  try {
    JSON.parse(input);
  } catch {
    throw new ServiceError('InvalidExecutionInput', 'Invalid execution input: not JSON');
  }
  const executionArn = executionArnOf(machine.name, name);
  const existing = em.executions.get(executionArn);
  // As AWS (standard workflows): the same name and input while running is the same execution;
  // a closed execution's name, or another input, is refused.
  if (existing) {
    if (existing.status !== 'RUNNING' || existing.input !== input) {
      throw new ServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
    }
    return { executionArn, startDate: epochSeconds(existing.startDate) };
  }
  const execution = startExecution(em, machine, name, input);
  em.executions.set(executionArn, execution);
  return { executionArn, startDate: epochSeconds(execution.startDate) };
}

function describeExecution(em: Emulator, body: RequestBody): unknown {
  const execution = executionFor(em, body.executionArn);
  return {
    ...summaryOf(execution),
    input: execution.input,
    inputDetails: { included: true },
    ...(execution.output !== undefined ? { output: execution.output, outputDetails: { included: true } } : {}),
    ...(execution.error !== undefined ? { error: execution.error } : {}),
    ...(execution.cause !== undefined ? { cause: execution.cause } : {}),
  };
}

function getExecutionHistory(em: Emulator, body: RequestBody): unknown {
  const execution = executionFor(em, body.executionArn);
  const ordered = [...execution.history].sort((a, b) => a.timestamp - b.timestamp || a.rank - b.rank);
  const withData = body.includeExecutionData !== false;
  const events = ordered.map((event, index) => ({
    id: index + 1,
    previousEventId: index,
    timestamp: event.timestamp / 1000,
    type: event.type,
    ...(withData ? event.details : withoutData(event.details)),
  }));
  if (body.reverseOrder === true) events.reverse();
  const { items, nextToken } = page(events, body.maxResults, body.nextToken, 1000);
  return { events: items, ...(nextToken ? { nextToken } : {}) };
}

function stopExecution(em: Emulator, body: RequestBody): unknown {
  const execution = executionFor(em, body.executionArn);
  if (execution.status === 'RUNNING') {
    Object.assign(execution, {
      status: 'ABORTED',
      stopDate: new Date(),
      ...(typeof body.error === 'string' ? { error: body.error } : {}),
      ...(typeof body.cause === 'string' ? { cause: body.cause } : {}),
    });
    execution.abort();
  }
  return { stopDate: epochSeconds(execution.stopDate!) };
}

function listExecutions(em: Emulator, body: RequestBody): unknown {
  const machine = machineFor(em, body.stateMachineArn);
  const matching = [...em.executions.values()]
    .filter((execution) => execution.stateMachineArn === machine.arn)
    .filter((execution) => !body.statusFilter || execution.status === body.statusFilter)
    .sort((a, b) => b.startDate.getTime() - a.startDate.getTime());
  const { items, nextToken } = page(matching, body.maxResults, body.nextToken, 100);
  return { executions: items.map(summaryOf), ...(nextToken ? { nextToken } : {}) };
}

export const operations: Record<string, (em: Emulator, body: RequestBody) => unknown> = {
  StartExecution: startExecutionOperation,
  DescribeExecution: describeExecution,
  GetExecutionHistory: getExecutionHistory,
  StopExecution: stopExecution,
  ListExecutions: listExecutions,
};
