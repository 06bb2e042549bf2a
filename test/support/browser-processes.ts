import { readdirSync, readFileSync } from 'node:fs';

/** The Chromium main processes this process started (their children are theirs): Linux's /proc. */
export const browserPids = (): number[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return (
          parent === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--remote-debugging-pipe')
        );
      } catch {
        return false; // a process that ended meanwhile
      }
    })
    .map(Number);
