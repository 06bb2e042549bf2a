import {
  CreateApiKeyCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetUsagePlanCommand,
  GetUsagePlansCommand,
  UpdateUsagePlanCommand,
} from '@aws-sdk/client-api-gateway';
import { describe, expect, it } from 'vitest';
import {
  applyClientUsagePlan,
  createUsagePlanKey,
  deleteClientApiKeys,
  deleteClientUsagePlan,
  returnToDefaultUsagePlan,
} from '#lib/tenancy/usage-plan-keys';
import { clientSending } from '#test/support/recording-api-gateway';

describe('usage plan keys (AWS)', () => {
  it('creates an enabled API key named after the client and attaches it to the plan, returning its id and value', async () => {
    const { client, sent } = clientSending(async (command) =>
      command instanceof CreateApiKeyCommand ? { id: 'k1d', value: 'the-key-value-0123456789abcdef' } : {},
    );
    expect(await createUsagePlanKey(client, { clientId: 'c-1', usagePlanId: 'plan1' })).toEqual({
      apiGatewayKeyId: 'k1d',
      usageIdentifierKey: 'the-key-value-0123456789abcdef',
    });
    expect(sent.map((command) => (command as object).constructor)).toEqual([
      CreateApiKeyCommand,
      CreateUsagePlanKeyCommand,
    ]);
    expect((sent[0] as CreateApiKeyCommand).input).toMatchObject({ name: 'client-c-1', enabled: true });
    expect((sent[1] as CreateUsagePlanKeyCommand).input).toEqual({
      usagePlanId: 'plan1',
      keyId: 'k1d',
      keyType: 'API_KEY',
    });
  });

  it('deletes the key again when it cannot be attached, and reports the failure', async () => {
    const { client, sent } = clientSending(async (command) => {
      if (command instanceof CreateUsagePlanKeyCommand)
        throw Object.assign(new Error('no such plan'), { name: 'NotFoundException' });
      return command instanceof CreateApiKeyCommand ? { id: 'k1d', value: 'the-key-value-0123456789abcdef' } : {};
    });
    await expect(createUsagePlanKey(client, { clientId: 'c-1', usagePlanId: 'nope' })).rejects.toThrow('no such plan');
    expect(sent.at(-1)).toBeInstanceOf(DeleteApiKeyCommand);
    expect((sent.at(-1) as DeleteApiKeyCommand).input).toEqual({ apiKey: 'k1d' });
  });
});

/**
 * API Gateway's usage plans and keys as this module sees them, kept in memory behind the recording
 * client: a key is in at most one plan per stage, as API Gateway holds it, and a plan attached to a
 * stage cannot be deleted.
 */
const usagePlansFake = () => {
  const stages = [{ apiId: 'api1', stage: 'prod' }];
  const plans = new Map<
    string,
    { id: string; name: string; apiStages: typeof stages; throttle?: object; quota?: object; keys: Set<string> }
  >([
    [
      'default',
      {
        id: 'default',
        name: 'UsagePlan',
        apiStages: stages,
        throttle: { rateLimit: 50, burstLimit: 100 },
        keys: new Set(['k-c1']),
      },
    ],
  ]);
  const apiKeys = [
    { id: 'k-c1', name: 'client-c1', value: 'value-of-c1' },
    { id: 'k-c1-stray', name: 'client-c1', value: 'a-second-key-nobody-uses' },
    { id: 'k-c10', name: 'client-c10', value: 'value-of-c10' },
  ];
  const view = ({ keys, ...plan }: { keys: Set<string> } & Record<string, unknown>) => plan;
  const { client, sent } = clientSending(async (command) => {
    if (command instanceof GetApiKeysCommand) {
      const { nameQuery = '' } = command.input;
      return { items: apiKeys.filter((key) => key.name.startsWith(nameQuery)) };
    }
    if (command instanceof GetUsagePlansCommand) {
      const { keyId } = command.input;
      return { items: [...plans.values()].filter((plan) => !keyId || plan.keys.has(keyId)).map(view) };
    }
    if (command instanceof GetUsagePlanCommand) return view(plans.get(command.input.usagePlanId!)!);
    if (command instanceof CreateUsagePlanCommand) {
      const id = `plan-${plans.size}`;
      const { name, apiStages, throttle, quota } = command.input;
      plans.set(id, {
        id,
        name: name!,
        apiStages: apiStages as typeof stages,
        throttle: throttle!,
        quota: quota!,
        keys: new Set(),
      });
      return view(plans.get(id)!);
    }
    if (command instanceof UpdateUsagePlanCommand) {
      const plan = plans.get(command.input.usagePlanId!)!;
      for (const { op, path, value } of command.input.patchOperations ?? []) {
        if (op === 'remove' && path === '/apiStages') {
          plan.apiStages = plan.apiStages.filter(({ apiId, stage }) => `${apiId}:${stage}` !== value);
        } else if (op === 'replace') {
          const [, group, field] = path!.split('/');
          (plan as unknown as Record<string, Record<string, number>>)[group!]![field!] = Number(value);
        }
      }
      return view(plan);
    }
    if (command instanceof CreateUsagePlanKeyCommand) {
      const { usagePlanId, keyId } = command.input;
      if ([...plans.values()].some((plan) => plan.keys.has(keyId!))) {
        throw Object.assign(new Error('A key cannot be in two plans of one stage'), { name: 'ConflictException' });
      }
      plans.get(usagePlanId!)!.keys.add(keyId!);
      return {};
    }
    if (command instanceof DeleteUsagePlanKeyCommand) {
      plans.get(command.input.usagePlanId!)!.keys.delete(command.input.keyId!);
      return {};
    }
    if (command instanceof DeleteApiKeyCommand) {
      const index = apiKeys.findIndex((key) => key.id === command.input.apiKey);
      if (index < 0)
        throw Object.assign(new Error('Invalid API Key identifier specified'), { name: 'NotFoundException' });
      apiKeys.splice(index, 1);
      return {};
    }
    if (command instanceof DeleteUsagePlanCommand) {
      const plan = plans.get(command.input.usagePlanId!)!;
      if (plan.apiStages.length)
        throw Object.assign(new Error('still attached to a stage'), { name: 'BadRequestException' });
      plans.delete(plan.id);
      return {};
    }
    throw new Error(`unexpected ${(command as object).constructor.name}`);
  });
  const planOfKey = (keyId: string) => [...plans.values()].find((plan) => plan.keys.has(keyId))?.id;
  return { client, sent, plans, planOfKey, apiKeys };
};

describe("a client's own usage plan (AWS: set-client-limits)", () => {
  const ids = { clientId: 'c1', usageIdentifierKey: 'value-of-c1', defaultUsagePlanId: 'default' };

  it("creates the plan on the default plan's stages with the limits, and moves the key there off the default plan", async () => {
    const fake = usagePlansFake();
    const { usagePlanId } = await applyClientUsagePlan(fake.client, {
      ...ids,
      limits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 1000 },
    });
    expect(fake.plans.get(usagePlanId)).toMatchObject({
      name: 'client-c1',
      apiStages: [{ apiId: 'api1', stage: 'prod' }],
      throttle: { rateLimit: 5, burstLimit: 10 },
      quota: { limit: 1000, period: 'DAY' },
    });
    expect(fake.planOfKey('k-c1')).toBe(usagePlanId);
    // The key leaves the default plan before it joins its own: one plan per stage.
    const moves = fake.sent.filter(
      (command) => command instanceof DeleteUsagePlanKeyCommand || command instanceof CreateUsagePlanKeyCommand,
    );
    expect(
      moves.map((command) => [
        (command as object).constructor,
        (command as DeleteUsagePlanKeyCommand).input.usagePlanId,
      ]),
    ).toEqual([
      [DeleteUsagePlanKeyCommand, 'default'],
      [CreateUsagePlanKeyCommand, usagePlanId],
    ]);
  });

  it("updates the plan in place on the next change (the day's count is kept), without moving the key again", async () => {
    const fake = usagePlansFake();
    const first = await applyClientUsagePlan(fake.client, {
      ...ids,
      limits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 1000 },
    });
    fake.sent.length = 0;
    const second = await applyClientUsagePlan(fake.client, {
      ...ids,
      limits: { rateLimit: 7, burstLimit: 9, quotaPerDay: 50 },
    });
    expect(second).toEqual(first);
    expect(fake.plans.get(first.usagePlanId)).toMatchObject({
      throttle: { rateLimit: 7, burstLimit: 9 },
      quota: { limit: 50 },
    });
    expect(fake.sent.some((command) => command instanceof CreateUsagePlanCommand)).toBe(false);
    expect(fake.sent.some((command) => command instanceof CreateUsagePlanKeyCommand)).toBe(false);
    expect(fake.plans.size).toBe(2);
  });

  it('puts the key back on the default plan when it cannot join its own, and reports the failure', async () => {
    const fake = usagePlansFake();
    const original = fake.client.send.bind(fake.client);
    fake.client.send = (async (command: unknown) => {
      const input = (command as CreateUsagePlanKeyCommand).input;
      if (command instanceof CreateUsagePlanKeyCommand && input.usagePlanId !== 'default') {
        throw Object.assign(new Error('too many requests'), { name: 'TooManyRequestsException' });
      }
      return original(command as never);
    }) as typeof fake.client.send;
    await expect(
      applyClientUsagePlan(fake.client, { ...ids, limits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 1000 } }),
    ).rejects.toThrow('too many requests');
    expect(fake.planOfKey('k-c1')).toBe('default');
  });

  it('back on the defaults: the key returns to the default plan and the own plan is deleted (stages removed first)', async () => {
    const fake = usagePlansFake();
    const { usagePlanId } = await applyClientUsagePlan(fake.client, {
      ...ids,
      limits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 1000 },
    });
    expect(await returnToDefaultUsagePlan(fake.client, ids)).toEqual({
      usagePlanId: 'default',
      deletedUsagePlanId: usagePlanId,
    });
    expect(fake.planOfKey('k-c1')).toBe('default');
    expect([...fake.plans.keys()]).toEqual(['default']);
    // Again: nothing left to do.
    expect(await returnToDefaultUsagePlan(fake.client, ids)).toEqual({
      usagePlanId: 'default',
      deletedUsagePlanId: null,
    });
  });

  it("finds the client's key by its stored value, and refuses a client whose key API Gateway does not have", async () => {
    const fake = usagePlansFake();
    await applyClientUsagePlan(fake.client, { ...ids, limits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 1000 } });
    expect(fake.planOfKey('k-c1-stray')).toBeUndefined();
    await expect(
      applyClientUsagePlan(fake.client, {
        ...ids,
        usageIdentifierKey: 'not-a-key-of-api-gateway',
        limits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 1000 },
      }),
    ).rejects.toThrow(/not among API Gateway's API keys/);
  });

  it("deletes a client's own plan (client deletion) and does nothing for a client without one", async () => {
    const fake = usagePlansFake();
    const { usagePlanId } = await applyClientUsagePlan(fake.client, {
      ...ids,
      limits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 1000 },
    });
    expect(await deleteClientUsagePlan(fake.client, { clientId: 'c10' })).toEqual({ deletedUsagePlanId: null });
    expect(await deleteClientUsagePlan(fake.client, { clientId: 'c1' })).toEqual({ deletedUsagePlanId: usagePlanId });
    expect([...fake.plans.keys()]).toEqual(['default']);
  });

  it("offboarding (delete-client): the client's keys leave their plans and are deleted, then its own plan; again, nothing is sent but reads", async () => {
    const fake = usagePlansFake();
    const { usagePlanId } = await applyClientUsagePlan(fake.client, {
      ...ids,
      limits: { rateLimit: 5, burstLimit: 10, quotaPerDay: 1000 },
    });
    // The stray is in a plan too, so both of the key's removals are seen.
    fake.plans.get('default')!.keys.add('k-c1-stray');
    fake.sent.length = 0;

    expect(await deleteClientApiKeys(fake.client, { clientId: 'c1' })).toEqual({
      deletedApiKeyIds: ['k-c1', 'k-c1-stray'],
    });
    expect(await deleteClientUsagePlan(fake.client, { clientId: 'c1' })).toEqual({ deletedUsagePlanId: usagePlanId });
    expect(fake.apiKeys.map((key) => key.id)).toEqual(['k-c10']);
    expect([...fake.plans.keys()]).toEqual(['default']);
    expect(fake.plans.get('default')!.keys.size).toBe(0);
    const writes = fake.sent
      .filter((command) => !(command instanceof GetApiKeysCommand || command instanceof GetUsagePlansCommand))
      .map((command) => [(command as object).constructor, (command as { input: object }).input]);
    expect(writes).toEqual([
      [DeleteUsagePlanKeyCommand, { usagePlanId, keyId: 'k-c1' }],
      [DeleteApiKeyCommand, { apiKey: 'k-c1' }],
      [DeleteUsagePlanKeyCommand, { usagePlanId: 'default', keyId: 'k-c1-stray' }],
      [DeleteApiKeyCommand, { apiKey: 'k-c1-stray' }],
      [
        UpdateUsagePlanCommand,
        { usagePlanId, patchOperations: [{ op: 'remove', path: '/apiStages', value: 'api1:prod' }] },
      ],
      [DeleteUsagePlanCommand, { usagePlanId }],
    ]);

    fake.sent.length = 0;
    expect(await deleteClientApiKeys(fake.client, { clientId: 'c1' })).toEqual({ deletedApiKeyIds: [] });
    expect(await deleteClientUsagePlan(fake.client, { clientId: 'c1' })).toEqual({ deletedUsagePlanId: null });
    expect(
      fake.sent.every((command) => command instanceof GetApiKeysCommand || command instanceof GetUsagePlansCommand),
    ).toBe(true);
    // Another client whose name begins the same is left alone.
    expect(await deleteClientApiKeys(fake.client, { clientId: 'c' })).toEqual({ deletedApiKeyIds: [] });
    expect(fake.apiKeys.map((key) => key.id)).toEqual(['k-c10']);
  });
});
