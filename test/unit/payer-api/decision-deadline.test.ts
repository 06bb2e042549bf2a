import { describe, expect, it } from 'vitest';
import { decisionDueAtOf, isUrgentRequest } from '#lib/payer-api/decision-deadline';

describe('the decision deadline of a PAS submission', () => {
  const sentAt = '2026-11-27T22:30:15.250Z';

  it('is 72 hours after the submission for an urgent request, to the millisecond', () => {
    expect(decisionDueAtOf(sentAt, true, 'cms-0057-f')).toBe('2026-11-30T22:30:15.250Z');
  });

  it('is 7 × 24 hours after it otherwise: calendar days, weekends included, no end-of-day rounding', () => {
    expect(decisionDueAtOf(sentAt, false, 'cms-0057-f')).toBe('2026-12-04T22:30:15.250Z');
    // Across a month's end and a leap day: still whole 24-hour days in UTC.
    expect(decisionDueAtOf('2028-02-25T00:00:00.000Z', false, 'cms-0057-f')).toBe('2028-03-03T00:00:00.000Z');
  });

  it('is none when the payer is not held to the timeframes, urgent or not', () => {
    expect(decisionDueAtOf(sentAt, true, 'none')).toBeNull();
    expect(decisionDueAtOf(sentAt, false, 'none')).toBeNull();
  });

  it('reads urgency from the level of service, as the Claim priority does: U and 03 are urgent', () => {
    expect(isUrgentRequest({ serviceLevelCode: 'U' })).toBe(true);
    expect(isUrgentRequest({ serviceLevelCode: '03' })).toBe(true);
    expect(isUrgentRequest({ serviceLevelCode: 'E' })).toBe(false);
    expect(isUrgentRequest({})).toBe(false);
  });
});
