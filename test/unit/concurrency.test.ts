import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
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
});

describe('backoffDelay', () => {
  it('is jittered within [0, attempt × backoff)', () => {
    expect(backoffDelay(1, 5, () => 0)).toBe(0);
    expect(backoffDelay(3, 5, () => 0.5)).toBe(7.5);
    for (let attempt = 1; attempt <= 5; attempt++) {
      for (let i = 0; i < 50; i++) {
        const delay = backoffDelay(attempt, 5);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(5 * attempt);
      }
    }
  });

  it('stops growing at maxBackoffMs', () => {
    expect(backoffDelay(3, 50, () => 0.5, 1000)).toBe(75);
    expect(backoffDelay(19, 50, () => 0.5, 1000)).toBe(475);
    expect(backoffDelay(20, 50, () => 0.5, 1000)).toBe(500);
    expect(backoffDelay(40, 50, () => 0.5, 1000)).toBe(500);
  });
});

describe('retryOnConflict', () => {
  const recordingSleep = () => {
    const pauses: number[] = [];
    return { pauses, sleep: async (ms: number) => void pauses.push(ms) };
  };

  it('returns the first attempt that does not conflict, pausing with bounded jitter in between', async () => {
    const { pauses, sleep } = recordingSleep();
    const seen: number[] = [];
    const result = await retryOnConflict(
      async (n) => {
        seen.push(n);
        if (n < 3) throw new VersionConflict();
        return 'written';
      },
      { attempts: 5, sleep, random: () => 0.999 },
    );
    expect(result).toBe('written');
    expect(seen).toEqual([1, 2, 3]);
    expect(pauses).toHaveLength(2);
    expect(pauses[0]).toBeLessThan(5);
    expect(pauses[1]).toBeLessThan(10);
    expect(pauses[1]).toBeGreaterThan(pauses[0]!);
  });

  it('gives up after `attempts` conflicts with onExhausted, without a pause after the last', async () => {
    const { pauses, sleep } = recordingSleep();
    let calls = 0;
    const outcome = retryOnConflict(
      async () => {
        calls++;
        throw new VersionConflict();
      },
      { attempts: 3, onExhausted: () => new Conflict('The request is being changed concurrently; retry.'), sleep },
    );
    const error = await outcome.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Conflict);
    expect((error as Conflict).message).toBe('The request is being changed concurrently; retry.');
    expect(calls).toBe(3);
    expect(pauses).toHaveLength(2);
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

  it('retries no more once its time budget would be exceeded, whatever attempts remain', async () => {
    // The clock reads any time at all (performance.now() counts from the process's start): only differences count.
    let time = 5_000;
    const pauses: number[] = [];
    const sleep = async (ms: number) => {
      pauses.push(ms);
      time += ms;
    };
    let calls = 0;
    const error = await retryOnConflict(
      async () => {
        calls++;
        time += 30; // each attempt takes 30 ms
        throw new VersionConflict();
      },
      {
        attempts: 100,
        backoffMs: 100,
        maxBackoffMs: 200,
        budgetMs: 1000,
        onExhausted: () => new Conflict('gave up'),
        sleep,
        random: () => 0.5,
        clock: () => time,
      },
    ).catch((e: unknown) => e);
    expect(error).toEqual(new Conflict('gave up'));
    // Pauses 50, then 100 (capped); attempts start at 0, 80, 210, …, 990: one more would start at 1120.
    expect(pauses).toEqual([50, 100, 100, 100, 100, 100, 100, 100]);
    expect(calls).toBe(9);
    expect(time).toBe(6_020);
  });

  it('still retries when the retry would start exactly at the end of its budget', async () => {
    let time = 700;
    let calls = 0;
    const result = await retryOnConflict(
      async () => {
        time += 30;
        if (++calls === 1) throw new VersionConflict();
        return 'written';
      },
      {
        attempts: 2,
        backoffMs: 100,
        budgetMs: 80, // 30 ms for the attempt and a 50 ms pause: the retry starts at 80 ms
        sleep: async (ms) => {
          time += ms;
        },
        random: () => 0.5,
        clock: () => time,
      },
    );
    expect(result).toBe('written');
    expect(calls).toBe(2);
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
    // Attempts of 20 ms or more each: the third ends past the budget (without one, all 50 would run).
    expect(calls).toBeLessThanOrEqual(3);
  });

  it('pauses for real by default, for the drawn delay', async () => {
    const started = performance.now();
    let calls = 0;
    await retryOnConflict(
      async () => {
        if (++calls === 1) throw new VersionConflict();
      },
      { attempts: 2, backoffMs: 60, random: () => 0.9 },
    );
    expect(calls).toBe(2);
    // A 54 ms pause: timers may fire a millisecond early, never much later than asked on an idle loop.
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(50);
    expect(elapsed).toBeLessThan(1000);
  });
});
