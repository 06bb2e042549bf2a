import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { normalizeSearchText, searchGramsOf } from '#lib/entities/portal-account';
import { AlreadyExists } from '#lib/errors';
import { portalOf } from '#lib/portal-accounts/portal-registry';
import { portalAccountsWithSecrets } from '#lib/portal-accounts/service-with-secrets';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { requestService } from '#lib/requests/requests';
import { authenticate } from '#lib/tenancy/authentication';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { newTenant, uniqueId } from '#test/support/api';
import { commandsOf, recordDynamoCalls } from '#test/support/dynamo-recorder';
import { validRequest } from '#test/support/fixtures';

/*
 * The DynamoDB calls a write path makes, counted with a recorder on the stores' client: where one
 * conditional write answers the question (does it exist?), there is no read before it.
 */
const recorder = recordDynamoCalls();
afterAll(() => recorder.stop());
beforeEach(() => recorder.reset());

describe('create request', () => {
  const requests = requestService(dynamoRequestStore);

  it('is one conditional put; an existing externalId is its refusal (409), with no read either', async () => {
    const { clientId } = await newTenant('round-trips-request');
    const externalId = uniqueId('req');
    recorder.reset();
    await requests.create(clientId, validRequest(externalId));
    expect(commandsOf(recorder.calls)).toEqual(['PutItemCommand']);

    recorder.reset();
    await expect(requests.create(clientId, validRequest(externalId))).rejects.toBeInstanceOf(AlreadyExists);
    expect(commandsOf(recorder.calls)).toEqual(['PutItemCommand']);
    expect((await requests.get(clientId, externalId)).version).toBe(1);
  });
});

describe('create portal account', () => {
  const accounts = portalAccountsWithSecrets;

  it('reads the client user, takes the organization’s quota, puts the account conditionally (no read of it), then its payer and trigram entries', async () => {
    const t = await newTenant('round-trips-portal-account');
    const input = {
      externalId: uniqueId('pacc'),
      clientUserId: t.clientUserId,
      portalId: 'sandbox',
      payerIds: ['P1', 'P2'],
      username: 'u',
      password: 'pw',
    };
    recorder.reset();
    await accounts.create({ clientId: t.clientId }, input);
    expect(commandsOf(recorder.calls)).toEqual([
      'GetItemCommand', // the client user: its organization
      'GetItemCommand', // the client's own storage quotas (docs/security.md, "Quotas")
      'UpdateItemCommand', // the organization's count, taken atomically
      'PutItemCommand',
      'PutItemCommand',
      'PutItemCommand',
      // One search index entry per trigram of the display name (the portal's name) and username.
      ...searchGramsOf(normalizeSearchText(portalOf('sandbox')!.name), 'u').map(() => 'PutItemCommand'),
    ]);

    recorder.reset();
    await expect(accounts.create({ clientId: t.clientId }, input)).rejects.toBeInstanceOf(AlreadyExists);
    // The refused put gives the count back.
    expect(commandsOf(recorder.calls)).toEqual([
      'GetItemCommand',
      'GetItemCommand',
      'UpdateItemCommand',
      'PutItemCommand',
      'UpdateItemCommand',
    ]);
  });
});

describe('authorizer', () => {
  it('reads the key once, only its record fields; records its use at most once per window', async () => {
    const { apiKey, clientId } = await newTenant('round-trips-authorizer');
    recorder.reset();
    expect(await authenticate(dynamoTenantStore, apiKey)).toMatchObject({ clientId });
    expect(commandsOf(recorder.calls)).toEqual(['GetItemCommand', 'UpdateItemCommand']);
    expect(recorder.calls[0]!.projection).toEqual(expect.any(String));

    recorder.reset();
    expect(await authenticate(dynamoTenantStore, apiKey)).toMatchObject({ clientId });
    expect(commandsOf(recorder.calls)).toEqual(['GetItemCommand']);
  });
});
