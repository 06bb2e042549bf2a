/** A task the local stack runs on a timer, as a schedule does on AWS. */
export interface PeriodicRun {
  /** One run now (what a tick does), awaited: tests use it rather than waiting for the timer. */
  runOnce(): Promise<void>;
  /** Stops the timer and waits for the run under way. */
  close(): Promise<void>;
}

/** Runs `run` every `intervalMs` and on demand; a run still under way when the next tick comes is not doubled. */
export const periodicRun = (run: () => Promise<void>, intervalMs: number): PeriodicRun => {
  let running: Promise<void> | undefined;
  const runOnce = () => {
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => void runOnce(), intervalMs);
  timer.unref();
  return {
    runOnce,
    close: async () => {
      clearInterval(timer);
      await running;
    },
  };
};
