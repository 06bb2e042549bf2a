/**
 * Structured JSON logs with an allow-list of fields. Bodies, headers, usernames, secrets and any
 * other PHI never reach this function's callers' arguments: pass ids and outcomes only.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** Read on every call (a cheap lookup) so a process can change its level at run time, as tests do. */
const threshold = () => order[process.env.LOG_LEVEL?.toLowerCase() as Level] ?? order.info;

export type LogFields = Record<string, string | number | boolean | undefined>;

const write = (level: Level, message: string, fields: LogFields = {}) => {
  if (order[level] < threshold()) return;
  const line = JSON.stringify({ level, message, time: new Date().toISOString(), ...fields });
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
};

export const log = {
  debug: (message: string, fields?: LogFields) => write('debug', message, fields),
  info: (message: string, fields?: LogFields) => write('info', message, fields),
  warn: (message: string, fields?: LogFields) => write('warn', message, fields),
  error: (message: string, fields?: LogFields) => write('error', message, fields),
};
