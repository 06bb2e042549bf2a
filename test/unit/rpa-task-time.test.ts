import { describe, expect, it } from 'vitest';
import { CLOSING_MS, lookupDeadlineMs, MIN_LOOKUP_MS } from '#lib/portal/lookup-deadlines';
import { TIMEOUTS } from '#lib/runs/state-machines';
import { taskTime } from '#lib/runs/task-time';

describe("a Task's time", () => {
  it("is the sooner of the Lambda's end and the Task's timeout from the invocation's start", () => {
    let now = 1_000_000;
    const clock = () => now;
    // The browser function: Lambda 150 s, Task 120 s.
    const lambdaEnds = now + 150_000;
    const task = taskTime({ getRemainingTimeInMillis: () => lambdaEnds - now }, TIMEOUTS.browserTask, clock);
    expect(task.getRemainingTimeInMillis()).toBe(120_000);
    now += 100_000;
    expect(task.getRemainingTimeInMillis()).toBe(20_000);
    now += 30_000;
    expect(task.getRemainingTimeInMillis()).toBe(0);
    // Locally the Lambda context ends with the Task (or sooner): that wins.
    expect(taskTime({ getRemainingTimeInMillis: () => 25_000 }, 120, clock).getRemainingTimeInMillis()).toBe(25_000);
    expect(taskTime(undefined, 60, clock).getRemainingTimeInMillis()).toBe(60_000);
  });
});

describe("a lookup's deadline", () => {
  it('is its share of the task left, at least 10 s, at most the per-call 30 s, never past the task', () => {
    // The Task's 120 s less a login: 25 lookups get the floor, 3 the per-call bound.
    expect(lookupDeadlineMs(115_000, 25, 30_000)).toBe(MIN_LOOKUP_MS);
    expect(lookupDeadlineMs(115_000, 3, 30_000)).toBe(30_000);
    expect(lookupDeadlineMs(65_000, 3, 30_000)).toBe(20_000);
    // Less than the floor left: what is left, less the closing; nothing left: 1 ms, never 0 or less.
    expect(lookupDeadlineMs(12_000, 5, 30_000)).toBe(12_000 - CLOSING_MS);
    expect(lookupDeadlineMs(2_000, 1, 30_000)).toBe(1);
  });
});
