import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Busy CPUs for a test that must hold on a loaded machine (a CI runner shared with other jobs, a
 * laptop compiling): worker threads that spin until stopped, by default one per core, or
 * CPU_BURN_THREADS. Each thread competes with the stack for the cores as another process would, so
 * timings stretch as they do at a high load average.
 */
export interface CpuBurner {
  threads: number;
  stop(): Promise<void>;
}

const SPIN = 'for (;;) {}';

const threadsWanted = () => {
  const configured = Number(process.env.CPU_BURN_THREADS);
  return Number.isInteger(configured) && configured >= 0 ? configured : availableParallelism();
};

/** Starts spinning at once; `stop` terminates every thread (termination interrupts the loop). */
export const startCpuBurner = (threads = threadsWanted()): CpuBurner => {
  const workers = Array.from({ length: threads }, () => new Worker(SPIN, { eval: true }));
  return {
    threads,
    stop: async () => {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
};
