import type { ClientLimits } from '#local/throttle';

/**
 * The default client limits of the test suite's stack and of the load benchmarks: their default clients
 * (load, hostile-input and concurrency runs) send far more than the deployed default lets a client, so the
 * gateway would throttle the runs instead of measuring the service. A client given its own small limits is
 * still throttled (throttling.test.ts), and `npm start` keeps the deployed default (local-start.test.ts).
 */
export const SUITE_CLIENT_LIMITS: ClientLimits = { rateLimit: 1000, burstLimit: 2000, quotaPerDay: 100_000_000 };
