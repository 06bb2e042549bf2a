import { inject } from 'vitest';

// Test files talk to the same emulators as the local stack's handlers (for provisioning and for
// reading raw items); the SDK clients read these variables when first imported.
Object.assign(process.env, inject('stackEnv'));
// The stack's process logs at every level (global-setup.ts); a test file's own handlers as the report does.
process.env.LOG_LEVEL = inject('logLevel');
// The stack's process runs many invocations at once (local/invocations.ts) and this process inherits its
// environment; a test file calls handlers directly, one at a time as on Lambda, unless it turns contexts on.
delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
