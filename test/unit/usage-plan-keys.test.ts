import { CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteApiKeyCommand } from '@aws-sdk/client-api-gateway';
import { describe, expect, it } from 'vitest';
import { createUsagePlanKey } from '#lib/tenancy/usage-plan-keys';
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
