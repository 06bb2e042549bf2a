import { NestedStack, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { synthesize, templateOf } from './synthesized-app.ts';

/*
 * CloudFormation's quotas per template: 500 resources, 200 outputs, 200 parameters. A nested stack is a
 * template of its own (one resource of its parent's). The app fails here at 90% of each, so that the change
 * that nears a quota is the one that splits (docs/infrastructure.md, "Resource counts"). Bundling is skipped:
 * it changes no count.
 */
const LIMITS = { resources: 450, outputs: 180, parameters: 180 } as const;
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

let app: ReturnType<typeof synthesize>;
beforeAll(() => {
  app = synthesize({ context: NO_BUNDLING });
}, 180_000);
afterAll(() => app?.cleanUp());

interface Size {
  stack: string;
  resources: number;
  outputs: number;
  parameters: number;
}

/** Every stack of the app, nested ones included, with its template's counts. */
const sizes = (): Size[] =>
  app.app.node
    .findAll()
    .filter((construct): construct is Stack => Stack.isStack(construct))
    .map((stack) => {
      const template = templateOf(stack).toJSON();
      const count = (section: string) => Object.keys(template[section] ?? {}).length;
      return {
        stack: NestedStack.isNestedStack(stack) ? stack.node.path : stack.stackName,
        resources: count('Resources'),
        outputs: count('Outputs'),
        parameters: count('Parameters'),
      };
    });

describe('stack sizes', () => {
  it(`keeps every stack of the app, nested or not, at ${LIMITS.resources} resources or fewer (and ${LIMITS.outputs} outputs and parameters)`, () => {
    const measured = sizes();
    const width = Math.max(...measured.map((size) => size.stack.length));
    console.log(
      measured
        .map(
          ({ stack, resources, outputs, parameters }) =>
            `${stack.padEnd(width)}  ${String(resources).padStart(3)} resources  ${String(outputs).padStart(3)} outputs  ${String(parameters).padStart(3)} parameters`,
        )
        .join('\n'),
    );
    // Every stack is counted: the six of the app and the API's areas.
    expect(measured.map((size) => size.stack)).toEqual(
      expect.arrayContaining([
        'ServiceReviewData',
        'ServiceReviewAutomation',
        'ServiceReviewApi',
        'ServiceReviewEvents',
        'ServiceReviewAudit',
        'ServiceReviewMonitoring',
        ...Object.values(app.api.areas).map((area) => area.node.path),
      ]),
    );
    expect(measured.filter((size) => size.resources > LIMITS.resources)).toEqual([]);
    expect(measured.filter((size) => size.outputs > LIMITS.outputs)).toEqual([]);
    expect(measured.filter((size) => size.parameters > LIMITS.parameters)).toEqual([]);
  });
});
