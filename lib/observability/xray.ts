import { createSocket, type Socket } from 'node:dgram';
import { afterTheAnswer } from './after-answer.ts';
import { log } from './logger.ts';

/*
 * The two formats X-Ray's Lambda integration speaks: the trace header the runtime sets per
 * invocation (`Root=1-…;Parent=…;Sampled=1`, maybe more fields such as Lineage) and the daemon's UDP
 * protocol (a JSON header line, then one segment document per datagram).
 */

export interface TraceContext {
  root: string;
  /** The id of the function's segment (recorded by Lambda): the parent of every subsegment. */
  parent: string;
  sampled: boolean;
  /** The header's other fields (`;Lineage=…`), passed on downstream as the X-Ray SDK does. */
  extra: string;
}

/** A subsegment of an AWS call, in the X-Ray segment document's fields (as the X-Ray SDK's aws3 patcher writes it). */
export interface AwsSubsegment {
  type: 'subsegment';
  id: string;
  trace_id: string;
  parent_id: string;
  name: string;
  namespace: 'aws';
  start_time: number;
  end_time: number;
  aws: {
    operation: string;
    region?: string;
    request_id?: string;
    id_2?: string;
    retries: number;
    table_name?: string;
    table_names?: string[];
    bucket_name?: string;
  };
  http?: { response: { status: number; content_length?: number } };
  error?: true;
  fault?: true;
  throttle?: true;
  cause?: { exceptions: { id: string; type: string; remote: true }[] };
}

const PROTOCOL_HEADER = '{"format":"json","version":1}\n';
const TRACE_ID = /^1-[0-9a-f]{8}-[0-9a-f]{24}$/;
const SEGMENT_ID = /^[0-9a-f]{16}$/;

let lastHeader: string | undefined;
let lastContext: TraceContext | undefined;

/** The header's trace, or undefined when it has no valid Root, Parent and Sampled (Lambda's pass-through has only a Root). */
export const traceContextOf = (header: string | undefined): TraceContext | undefined => {
  if (!header) return undefined;
  if (header === lastHeader) return lastContext;
  const fields = new Map<string, string>();
  let extra = '';
  for (const field of header.split(';')) {
    const at = field.indexOf('=');
    if (at <= 0) continue;
    const key = field.slice(0, at).trim();
    const value = field.slice(at + 1).trim();
    if (['root', 'parent', 'sampled', 'self'].includes(key.toLowerCase())) fields.set(key.toLowerCase(), value);
    else if (extra.length + field.length < 256) extra += `;${key}=${value}`;
  }
  const root = fields.get('root') ?? '';
  const parent = fields.get('parent') ?? '';
  const sampled = fields.get('sampled');
  const context =
    TRACE_ID.test(root) && SEGMENT_ID.test(parent) && (sampled === '0' || sampled === '1')
      ? { root, parent, sampled: sampled === '1', extra }
      : undefined;
  lastHeader = header;
  lastContext = context;
  return context;
};

/** The daemon's UDP host and port from AWS_XRAY_DAEMON_ADDRESS: `host:port`, or `udp:host:port tcp:host:port`. */
export const daemonOf = (address: string): { host: string; port: number } | undefined => {
  const parts = address.trim().split(/\s+/);
  const udp = parts.length > 1 ? parts.find((part) => part.startsWith('udp:'))?.slice('udp:'.length) : parts[0];
  const at = udp?.lastIndexOf(':') ?? -1;
  if (!udp || at <= 0) return undefined;
  const port = Number(udp.slice(at + 1));
  return Number.isInteger(port) && port > 0 && port < 65536 ? { host: udp.slice(0, at), port } : undefined;
};

let socket: Socket | undefined;
let failureLogged = false;

/** A failed send costs the trace a subsegment, never the call: one debug line per process at most. */
const swallow = (error: unknown) => {
  if (!error || failureLogged) return;
  failureLogged = true;
  const { code, name } = error as { code?: unknown; name?: unknown };
  log.debug('X-Ray subsegment not sent', { errorName: String(code ?? name ?? 'Error') });
};

/**
 * Fire and forget on one UDP socket, created on first use and unref'd (it never keeps the process
 * alive). The datagram leaves a few ticks later (an IP address needs no DNS lookup).
 */
const sendToDaemon = (subsegment: AwsSubsegment, daemonAddress: string): void => {
  try {
    const daemon = daemonOf(daemonAddress);
    if (!daemon) return;
    if (!socket) {
      socket = createSocket('udp4');
      socket.on('error', swallow);
      socket.unref();
    }
    socket.send(PROTOCOL_HEADER + JSON.stringify(subsegment), daemon.port, daemon.host, swallow);
  } catch (error) {
    swallow(error);
  }
};

/**
 * Builds and sends the subsegment after the caller has its answer (after-answer.ts), each in a datagram of its
 * own: the daemon takes one document per datagram, and the subsegments of one invocation are siblings, not a
 * tree that one document could carry.
 */
export const sendAfterTheAnswer = (
  subsegment: () => AwsSubsegment | Promise<AwsSubsegment>,
  daemonAddress: string,
): void =>
  afterTheAnswer(() => {
    Promise.resolve()
      .then(subsegment)
      .then((document) => sendToDaemon(document, daemonAddress), swallow);
  });
