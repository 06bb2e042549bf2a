import { localEnvironment, pasPayerSettingsOf } from '../config.ts';
import { PAS_MEMBER_RULES } from './seed.ts';
import { startPasPayer } from './server.ts';

/**
 * The local PAS payer on its own, for a person with curl or a client of their own:
 *   npx tsx local/pas-payer/main.ts      # PORT (default 3200), HOST (default 127.0.0.1): local/config.ts
 * It prints its URLs and the operator's link, whose token is new at every start, like the payer's state.
 * Register a client with that token (POST /register, docs/pas-payer.md).
 */
const payer = await startPasPayer(pasPayerSettingsOf(localEnvironment()));
console.log(`Local PAS payer listening on ${payer.url}`);
console.log(`  FHIR base:  ${payer.fhirBaseUrl}   token URL: ${payer.tokenUrl}`);
console.log(`  members:    ${[...PAS_MEMBER_RULES].map(([member, rule]) => `${member} ${rule}`).join(', ')}`);
// A local tool's token, like the sandbox portal's: whoever reads this terminal is the operator.
console.log(`  operator:   ${payer.operatorUrl}  (register clients, decide pended claims; docs/pas-payer.md)`);
const stop = () => payer.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
