import { Secret, TOTP } from 'otpauth';
import { localEnvironment, sandboxPortalSettingsOf } from '../config.ts';
import { SANDBOX_USERS } from './seed.ts';
import { startSandboxPortal } from './server.ts';

/**
 * The sandbox portal on its own, for a person with a browser:
 *   npx tsx local/sandbox-portal/main.ts           # PORT (default 3100), HOST (default 127.0.0.1): local/config.ts
 *   npx tsx local/sandbox-portal/main.ts --totp    # the current code of the seeded TOTP user
 * Passwords are not printed; they are in seed.ts and docs/sandbox-portal.md. The operator's link is
 * printed: its token is new at every start, like the portal's state.
 */
const totpUser = SANDBOX_USERS.find((user) => user.totpSecret)!;

if (process.argv.includes('--totp')) {
  const totp = new TOTP({ secret: Secret.fromBase32(totpUser.totpSecret!), algorithm: 'SHA1', digits: 6, period: 30 });
  const secondsLeft = 30 - Math.floor((Date.now() / 1000) % 30);
  console.log(`${totp.generate()}  (${totpUser.username}, valid for ${secondsLeft} s more, and the next 30 s)`);
} else {
  const portal = await startSandboxPortal(sandboxPortalSettingsOf(localEnvironment()));
  console.log(`Sandbox payer portal listening on ${portal.url}`);
  console.log(`  users: ${SANDBOX_USERS.map((user) => user.username).join(', ')}`);
  // A local tool's token, like the demo API key `npm start` prints: whoever reads this terminal is the operator.
  console.log(`  operator: ${portal.operatorUrl}  (decide pended authorizations; docs/sandbox-portal.md)`);
  const stop = () => portal.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
