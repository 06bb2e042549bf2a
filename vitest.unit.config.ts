import { defineConfig } from 'vitest/config';
import { unitProject } from './vitest.config.ts';

/**
 * The unit project alone, for mutation testing (stryker.config.mjs): Stryker's vitest runner takes a config
 * file but cannot pick a project of one, and the root config's other projects would start the local stack.
 */
export default defineConfig(unitProject);
