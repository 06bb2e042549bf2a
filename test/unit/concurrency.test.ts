import { describe, expect, it } from 'vitest';
import {
  backoffWindow,
  changedByAnotherWrite,
  changedConcurrently,
  checkIfMatch,
  retryOnConflict,
  VersionConflict,
} from '#lib/concurrency';
import { Conflict, Stale } from '#lib/errors';

const staleMessageOf = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(Stale);
    return (error as Stale).message;
  }
  return 'passed';
};

describe('checkIfMatch (RFC 9110 If-Match)', () => {
  const current = '"3"';
  const check = (ifMatch: string | undefined) => staleMessageOf(() => checkIfMatch(ifMatch, current, 'request'));
  const checkMissing = (ifMatch: string | undefined) =>
    staleMessageOf(() => checkIfMatch(ifMatch, undefined, 'request'));

  it('passes without If-Match, whether or not anything exists', () => {
    expect(check(undefined)).toBe('passed');
    expect(checkMissing(undefined)).toBe('passed');
  });

  it('passes `*` when the resource exists, and refuses any If-Match when it does not', () => {
    expect(check('*')).toBe('passed');
    expect(check(' * ')).toBe('passed');
    expect(checkMissing('*')).toBe('If-Match was given but the request does not exist.');
    expect(checkMissing('"1"')).toBe('If-Match was given but the request does not exist.');
  });

  it('matches the current ETag anywhere in a list, weak or strong', () => {
    expect(check('"3"')).toBe('passed');
    expect(check('W/"3"')).toBe('passed');
    expect(check('"1", "2" ,W/"3"')).toBe('passed');
  });

  it('ignores the blanks around each element of the list', () => {
    expect(check('"1", "3"')).toBe('passed');
    expect(check('"1",\t"3" ')).toBe('passed');
    expect(check(' W/"3" , "4"')).toBe('passed');
  });

  it('drops `W/` only as a prefix, never from inside an ETag', () => {
    expect(check('"W/3"')).toBe('The request has changed: its current ETag is "3".');
  });

  it('refuses other ETags with the current one in the message', () => {
    expect(check('"2"')).toBe('The request has changed: its current ETag is "3".');
    expect(check('"1", W/"2"')).toBe('The request has changed: its current ETag is "3".');
    expect(check('3')).toBe('The request has changed: its current ETag is "3".');
    expect(staleMessageOf(() => checkIfMatch('"9"', '"3"', 'portal account'))).toBe(
      'The portal account has changed: its current ETag is "3".',
    );
  });
});

describe('the failures of a conditional write', () => {
  it('are VersionConflict for the stores, named so in logs', () => {
    const conflict = new VersionConflict();
    expect(conflict).toBeInstanceOf(Error);
    expect(conflict.name).toBe('VersionConflict');
    expect(conflict.message).toBe('The stored version changed');
  });

  it('name their subject, as clients read them', () => {
    expect(changedByAnotherWrite('request')).toEqual(new Stale('The request was changed by another write.'));
    expect(changedByAnotherWrite('request')).toBeInstanceOf(Stale);
    expect(changedConcurrently('portal account')).toBeInstanceOf(Conflict);
    expect(changedConcurrently('portal account').message).toBe(
      'The portal account is being changed concurrently; retry.',
    );
  });

  it('say when to retry a write that concurrent writers kept beating: whole seconds, at least one', () => {
    expect(changedConcurrently('request').retryAfterSeconds).toBe(1);
    expect(changedConcurrently('request', 0).retryAfterSeconds).toBe(1);
    expect(changedConcurrently('request', 999).retryAfterSeconds).toBe(1);
    expect(changedConcurrently('request', 1001).retryAfterSeconds).toBe(2);
    expect(changedConcurrently('request', 4_200).retryAfterSeconds).toBe(5);
    expect(new Conflict('A status that refuses it').retryAfterSeconds).toBeUndefined();
  });
});

describe('backoffWindow', () => {
  it('doubles with each conflict, in slots of the losing attempt’s duration', () => {
    expect([1, 2, 3, 4].map((conflicts) => backoffWindow(conflicts, 20, 5, 10_000))).toEqual([40, 80, 160, 320]);
    expect(backoffWindow(3, 500, 5, 10_000)).toBe(4_000);
  });

  it('uses a slot of at least backoffMs, however quick the attempt', () => {
    expect(backoffWindow(1, 0, 10, 10_000)).toBe(20);
    expect(backoffWindow(2, 3, 10, 10_000)).toBe(40);
  });

  it('stops growing at maxBackoffMs', () => {
    expect(backoffWindow(6, 20, 5, 1_000)).toBe(1_000);
    expect(backoffWindow(40, 20, 5, 1_000)).toBe(1_000);
    expect(backoffWindow(1, 5_000, 5, 1_000)).toBe(1_000);
  });

  it('defaults to slots of 5 ms and windows of at most 1 s', () => {
    expect(backoffWindow(1, 0)).toBe(10);
    expect(backoffWindow(20, 0)).toBe(1_000);
  });
});

/** A clock that only the attempts and the pauses move: `attemptMs` per attempt. */
const simulatedTime = (attemptMs: number) => {
  let time = 5_000; // performance.now() counts from the process's start: only differences count
  const pauses: number[] = [];
  return {
    pauses,
    clock: () => time,
    sleep: async (ms: number) => {
      pauses.push(ms);
      time += ms;
    },
    spend: () => {
      time += attemptMs;
    },
    elapsedSince: (start: number) => time - start,
  };
};

describe('retryOnConflict', () => {
  it('returns the first attempt that does not conflict, pausing within windows that double', async () => {
    const time = simulatedTime(20);
    const seen: number[] = [];
    const result = await retryOnConflict(
      async (n) => {
        seen.push(n);
        time.spend();
        if (n < 4) throw new VersionConflict();
        return 'written';
      },
      { attempts: 5, backoffMs: 5, sleep: time.sleep, clock: time.clock, random: () => 0.5 },
    );
    expect(result).toBe('written');
    expect(seen).toEqual([1, 2, 3, 4]);
    // Half of 2, 4 and 8 slots of 20 ms (the attempts' duration).
    expect(time.pauses).toEqual([20, 40, 80]);
  });

  it('draws each pause at random within its window', async () => {
    const draws = [0, 0.999, 0.25];
    const time = simulatedTime(10);
    await retryOnConflict(
      async (n) => {
        time.spend();
        if (n < 4) throw new VersionConflict();
      },
      { attempts: 4, backoffMs: 10, sleep: time.sleep, clock: time.clock, random: () => draws.shift()! },
    );
    expect(time.pauses).toEqual([0, 39.96, 20]);
  });

  it('gives up after `attempts` conflicts with onExhausted, without a pause after the last', async () => {
    const time = simulatedTime(10);
    let calls = 0;
    const outcome = retryOnConflict(
      async () => {
        calls++;
        time.spend();
        throw new VersionConflict();
      },
      {
        attempts: 3,
        onExhausted: (_, retryAfterMs) => changedConcurrently('request', retryAfterMs),
        sleep: time.sleep,
        clock: time.clock,
      },
    );
    const error = await outcome.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Conflict);
    expect((error as Conflict).message).toBe('The request is being changed concurrently; retry.');
    expect(calls).toBe(3);
    expect(time.pauses).toHaveLength(2);
  });

  it('hands onExhausted the pause it would have taken next: when the client may try again', async () => {
    const time = simulatedTime(1_000);
    const given: number[] = [];
    await retryOnConflict(
      async () => {
        time.spend();
        throw new VersionConflict();
      },
      {
        attempts: 2,
        maxBackoffMs: 10_000,
        onExhausted: (conflict, retryAfterMs) => {
          given.push(retryAfterMs);
          return conflict;
        },
        sleep: time.sleep,
        clock: time.clock,
        random: () => 0.75,
      },
    ).catch(() => undefined);
    // Paused 0.75 × 2 s after the first; the second conflict's window is 4 s.
    expect(time.pauses).toEqual([1_500]);
    expect(given).toEqual([3_000]);
  });

  it('rethrows the last conflict itself without onExhausted; one attempt means no retry', async () => {
    let calls = 0;
    const conflict = new VersionConflict();
    await expect(
      retryOnConflict(
        async () => {
          calls++;
          throw conflict;
        },
        { attempts: 1, sleep: async () => expect.unreachable('no pause after a single attempt') },
      ),
    ).rejects.toBe(conflict);
    expect(calls).toBe(1);
  });

  it('lets every other error through at once', async () => {
    let calls = 0;
    const failure = new Error('DynamoDB is down');
    await expect(
      retryOnConflict(
        async () => {
          calls++;
          throw failure;
        },
        { attempts: 5, onExhausted: () => new Conflict('never') },
      ),
    ).rejects.toBe(failure);
    expect(calls).toBe(1);
  });

  it('makes no retry that would end after its budget, whatever attempts remain', async () => {
    const time = simulatedTime(30);
    const start = time.clock();
    let calls = 0;
    const error = await retryOnConflict(
      async () => {
        calls++;
        time.spend();
        throw new VersionConflict();
      },
      {
        attempts: 100,
        backoffMs: 30,
        maxBackoffMs: 200,
        budgetMs: 1_000,
        onExhausted: () => new Conflict('gave up'),
        sleep: time.sleep,
        clock: time.clock,
        random: () => 0.5,
      },
    ).catch((e: unknown) => e);
    expect(error).toEqual(new Conflict('gave up'));
    // Pauses of half of 60, 120, then 200 (capped): attempts end at 30, 90, 180, 310, …, 960; after it a
    // 100 ms pause and a 30 ms attempt would end at 1090.
    expect(time.pauses).toEqual([30, 60, 100, 100, 100, 100, 100, 100]);
    expect(calls).toBe(9);
    expect(time.elapsedSince(start)).toBe(960);
  });

  it('still retries when the retry would end exactly at the end of its budget', async () => {
    const time = simulatedTime(30);
    let calls = 0;
    const result = await retryOnConflict(
      async () => {
        time.spend();
        if (++calls === 1) throw new VersionConflict();
        return 'written';
      },
      {
        attempts: 2,
        backoffMs: 30,
        budgetMs: 120, // 30 ms for each attempt and a 60 ms pause (0.999 of 60, rounded up by the clock)
        sleep: async (ms) => time.sleep(Math.ceil(ms)),
        clock: time.clock,
        random: () => 0.999,
      },
    );
    expect(result).toBe('written');
    expect(calls).toBe(2);
  });

  it('gives up at once when its expected wait to win exceeds what is left, however short the pause drawn', async () => {
    // A 3 s attempt on a saturated store, 10 s of budget: the window is 6 s, so the expected wait to win
    // (3 s of pause, then a 3 s attempt) fits; after the second conflict (a 12 s window) it no longer does.
    const time = simulatedTime(3_000);
    const start = time.clock();
    let calls = 0;
    const error = await retryOnConflict(
      async () => {
        calls++;
        time.spend();
        throw new VersionConflict();
      },
      {
        attempts: 20,
        maxBackoffMs: 60_000,
        budgetMs: 10_000,
        onExhausted: () => new Conflict('gave up'),
        sleep: time.sleep,
        clock: time.clock,
        random: () => 0,
      },
    ).catch((e: unknown) => e);
    expect(error).toEqual(new Conflict('gave up'));
    expect(calls).toBe(2);
    expect(time.pauses).toEqual([0]);
    expect(time.elapsedSince(start)).toBe(6_000);
  });

  it('keeps to its budget on the real clock by default', async () => {
    let calls = 0;
    const error = await retryOnConflict(
      async () => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new VersionConflict();
      },
      { attempts: 50, budgetMs: 50, sleep: async () => undefined, onExhausted: () => new Conflict('gave up') },
    ).catch((e: unknown) => e);
    expect(error).toEqual(new Conflict('gave up'));
    // Attempts of 20 ms or more each: a third would end past the budget (without one, all 50 would run).
    expect(calls).toBeLessThanOrEqual(2);
  });

  it('pauses for real by default, for the drawn delay', async () => {
    const started = performance.now();
    let calls = 0;
    await retryOnConflict(
      async () => {
        if (++calls === 1) throw new VersionConflict();
      },
      { attempts: 2, backoffMs: 30, random: () => 0.9 },
    );
    expect(calls).toBe(2);
    // A 54 ms pause (0.9 of two 30 ms slots): timers may fire a millisecond early, never much later on an idle loop.
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(50);
    expect(elapsed).toBeLessThan(1000);
  });
});
