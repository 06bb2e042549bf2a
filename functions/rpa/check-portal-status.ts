/**
 * PLACEHOLDER, replaced at merge by the real task handler (docs/rpa.md): it exists only so the
 * automation stack synthesizes on this branch. The state machines bind to this module by name
 * (`automationTasks` in lib/routes.ts).
 */
export const handler = async (_event: unknown): Promise<never> => {
  throw new Error('not implemented yet');
};
