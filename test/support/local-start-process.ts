import { type ChildProcess, spawn } from 'node:child_process';

/**
 * `npm start` in a process of its own, as a newcomer (or Ctrl-C) sees it: its own state directory,
 * demo key and table; started until it prints its credentials, stopped with SIGTERM.
 */
export interface LocalStartOptions {
  stateDir: string;
  demoKey: string;
  tableName: string;
  /** How long it may take to come up. */
  timeoutMs?: number;
}

export const localStartProcess = ({ stateDir, demoKey, tableName, timeoutMs = 60_000 }: LocalStartOptions) => {
  let child: ChildProcess | undefined;

  /** Starts it with `args`; its base URL and what it printed once it is up. */
  const start = async (...args: string[]) => {
    child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts', ...args], {
      env: {
        ...process.env,
        PORT: '0',
        LOCAL_STATE_DIR: stateDir,
        DEMO_API_KEY: demoKey,
        DEMO_CLIENT_USER_ID: 'front-desk',
        LOCAL_TABLE_NAME: tableName,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk;
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    const started = Date.now();
    while (!/client user id/.test(output)) {
      if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
      if (Date.now() - started > timeoutMs) throw new Error(`npm start did not come up: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const baseUrl = /listening on (http:\/\/\S+)/.exec(output)![1]!;
    return { baseUrl, output };
  };

  /** Ctrl-C: the stack closes and the process exits. */
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };

  return { start, stop };
};
