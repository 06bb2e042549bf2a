import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { observed } from '#lib/observability/invocation';

const contextEndingIn = (ms: number): Context => {
  const deadline = Date.now() + ms;
  return {
    functionName: 'CheckPortalStatus',
    awsRequestId: '00000000-0000-4000-8000-000000000001',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  } as Context;
};

describe('observed()', () => {
  it('never ends an invocation early: a task outliving its deadline is timed out by Lambda or Step Functions, as States.Timeout', async () => {
    // Middy's default early timeout would reject 5 ms before the deadline with a `TimeoutError`,
    // which the automation's Catch reads as `portal_error` instead of `portal_timeout`.
    const slow = observed('CheckPortalStatus', async () => {
      await new Promise((resolve) => setTimeout(resolve, 120));
      return { done: true };
    });
    await expect(slow({}, contextEndingIn(40))).resolves.toEqual({ done: true });
  });

  it('passes a handler’s own failure through unchanged', async () => {
    const failing = observed('CheckPortalStatus', async () => {
      throw Object.assign(new Error('portal gone'), { name: 'PortalUnavailable' });
    });
    await expect(failing({}, contextEndingIn(1000))).rejects.toMatchObject({ name: 'PortalUnavailable' });
  });
});
