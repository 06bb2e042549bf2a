import { describe, expect, it } from 'vitest';
import type { SealedSecret } from '#lib/crypto/sealed-secret';
import type { AttachmentRecord } from '#lib/entities/attachment';
import { attachmentEntity } from '#lib/entities/attachment';
import { attr, defineEntity } from '#lib/entities/define-entity';
import { outboxEntity, outboxPendingPartitions } from '#lib/entities/outbox';
import { payerConnectionEntity, type StoredPayerConnection } from '#lib/entities/payer-connection';
import { payerEndpointEntity } from '#lib/entities/payer-endpoint';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import { portalAccountEntity } from '#lib/entities/portal-account';
import type { StoredRequest } from '#lib/entities/request';
import { requestEntity } from '#lib/entities/request';
import type { RpaBatchRecord, RpaRunRecord } from '#lib/entities/rpa';
import { rpaBatchEntity, rpaRunEntity } from '#lib/entities/rpa';
import { apiKeyEntity, clientEntity, clientUserEntity, organizationEntity } from '#lib/entities/tenancy';
import { dueDeliveryPartitions, webhookDeliveryEntity } from '#lib/entities/webhook';
import { newEvent } from '#lib/events/events';
import { outboxItemOf } from '#lib/events/outbox';
import { shardOf } from '#lib/table-shards';
import { afterAttempt, newDelivery } from '#lib/webhooks/delivery-records';

/*
 * The items the declarations write, attribute for attribute: these shapes are what the table
 * already holds, so a change here is a data migration, not a refactoring.
 */
const t0 = '2026-01-02T03:04:05.000Z';
const t1 = '2026-01-03T00:00:00.000Z';

const request: StoredRequest = {
  clientId: 'c1',
  externalId: 'A-1',
  document: { z: 1, a: { nested: [1, { b: null }] }, empty: {} },
  authorization: { status: 'pending', number: null, decisionDate: null, lastCheckedAt: null },
  version: 2,
  createdAt: t0,
  updatedAt: t1,
};

const pending: AttachmentRecord = {
  clientId: 'c1',
  externalId: 'A-1',
  attachmentId: 'att-1',
  objectKey: 'c1/requests/A-1/attachments/att-1',
  fileName: 'scan.pdf',
  contentType: 'application/pdf',
  size: 1234,
  sha256: 'ab'.repeat(32),
  uploadMethod: 'presigned',
  status: 'pending',
  expiresAt: t1,
  version: 1,
  createdAt: t0,
  updatedAt: t0,
};

const envelope = (ct: string): SealedSecret => ({
  v: 1,
  alg: 'AES-256-GCM',
  keyring: 'local',
  keyId: 'key-1',
  edk: 'ZWRr',
  iv: 'aXY=',
  ct,
  tag: 'dGFn',
});

const account: StoredPortalAccount = {
  clientId: 'c1',
  organizationId: 'org-1',
  externalId: 'P-1',
  clientUserId: 'user-1',
  portalId: 'availity',
  payerIds: [],
  displayName: 'Clinic ＡＢ',
  username: 'Front.Desk@Example',
  status: 'active',
  lastLogin: null,
  attention: null,
  password: envelope('cHc='),
  passwordChangedAt: t0,
  totpSecret: null,
  totpSecretChangedAt: null,
  version: 1,
  createdAt: t0,
  updatedAt: t0,
};

describe('Request', () => {
  it('is stored with its document as a JSON string', () => {
    expect(requestEntity.toItem(request)).toStrictEqual({
      pk: 'CLIENT#c1#REQ#A-1',
      sk: 'REQUEST',
      entity: 'Request',
      clientId: 'c1',
      externalId: 'A-1',
      document: '{"z":1,"a":{"nested":[1,{"b":null}]},"empty":{}}',
      authorization: { status: 'pending', number: null, decisionDate: null, lastCheckedAt: null },
      version: 2,
      createdAt: t0,
      updatedAt: t1,
    });
  });

  it('reads back exactly, key order included', () => {
    const read = requestEntity.fromItem(requestEntity.toItem(request));
    expect(read).toStrictEqual(request);
    expect(JSON.stringify(read.document)).toBe(JSON.stringify(request.document));
  });

  it('shares its partition with its attachments (one item collection)', () => {
    expect(requestEntity.key({ clientId: 'c1', externalId: 'A-1' })).toStrictEqual({
      pk: 'CLIENT#c1#REQ#A-1',
      sk: 'REQUEST',
    });
    expect(attachmentEntity.keys.pk.render({ clientId: 'c1', externalId: 'A-1' })).toBe('CLIENT#c1#REQ#A-1');
    expect(attachmentEntity.keys.sk.prefix).toBe('ATT#');
  });
});

describe('Attachment', () => {
  it('leaves unset optional fields out of the item', () => {
    expect(attachmentEntity.toItem(pending)).toStrictEqual({
      pk: 'CLIENT#c1#REQ#A-1',
      sk: 'ATT#att-1',
      entity: 'Attachment',
      ...pending,
    });
  });

  it('reads back without the absent fields, and with the present ones', () => {
    expect(attachmentEntity.fromItem(attachmentEntity.toItem(pending))).toStrictEqual(pending);
    const rejected: AttachmentRecord = {
      ...pending,
      documentType: 'lab',
      description: 'results',
      status: 'rejected',
      rejectionReason: 'size differs',
      version: 2,
    };
    delete rejected.expiresAt;
    const item = attachmentEntity.toItem(rejected);
    expect(item).not.toHaveProperty('expiresAt');
    expect(attachmentEntity.fromItem(item)).toStrictEqual(rejected);
  });
});

describe('PortalAccount', () => {
  it('stores secrets only as envelopes, unset fields not at all, search copies, and its filter index keys', () => {
    expect(portalAccountEntity.toItem(account)).toStrictEqual({
      pk: 'CLIENT#c1#PACC#P-1',
      sk: 'PACC',
      gsi1pk: 'CLIENT#c1#ORG#org-1#PACC',
      gsi1sk: `${t0}#P-1`,
      gsi2pk: 'CLIENT#c1#ORG#org-1#PACC#PORTAL#availity',
      gsi2sk: `${t0}#P-1`,
      gsi3pk: 'CLIENT#c1#ORG#org-1#PACC#STATUS#active',
      gsi3sk: `${t0}#P-1`,
      gsi4pk: 'CLIENT#c1#ORG#org-1#PACC#PORTAL#availity#STATUS#active',
      gsi4sk: `${t0}#P-1`,
      entity: 'PortalAccount',
      clientId: 'c1',
      organizationId: 'org-1',
      externalId: 'P-1',
      clientUserId: 'user-1',
      portalId: 'availity',
      payerIds: [],
      displayName: 'Clinic ＡＢ',
      displayNameSearch: 'clinic ab',
      username: 'Front.Desk@Example',
      usernameSearch: 'front.desk@example',
      status: 'active',
      passwordEnvelope: envelope('cHc='),
      passwordChangedAt: t0,
      version: 1,
      createdAt: t0,
      updatedAt: t0,
    });
  });

  it('stores set nullable fields and reads every field back', () => {
    const full: StoredPortalAccount = {
      ...account,
      payerIds: ['p1', 'p2'],
      lastLogin: { result: 'failed', at: t1 },
      totpSecret: envelope('dG90cA=='),
      totpSecretChangedAt: t1,
    };
    const item = portalAccountEntity.toItem(full);
    expect(item).toMatchObject({
      payerIds: ['p1', 'p2'],
      lastLogin: { result: 'failed', at: t1 },
      totpSecretEnvelope: envelope('dG90cA=='),
      totpSecretChangedAt: t1,
    });
    expect(item).not.toHaveProperty('password');
    expect(item).not.toHaveProperty('totpSecret');
    expect(portalAccountEntity.fromItem(item)).toStrictEqual(full);
    expect(portalAccountEntity.fromItem(portalAccountEntity.toItem(account))).toStrictEqual(account);
  });

  it('reads an item written before payerIds existed as having none, each time a new list', () => {
    const { payerIds: _, ...legacy } = portalAccountEntity.toItem(account);
    const first = portalAccountEntity.fromItem(legacy);
    expect(first.payerIds).toStrictEqual([]);
    first.payerIds.push('mutated');
    expect(portalAccountEntity.fromItem(legacy).payerIds).toStrictEqual([]);
  });

  it('reads stored NULLs as unset', () => {
    const item = { ...portalAccountEntity.toItem(account), lastLogin: null, totpSecretEnvelope: null, payerIds: null };
    expect(portalAccountEntity.fromItem(item)).toMatchObject({ lastLogin: null, totpSecret: null, payerIds: [] });
  });

  it('tells its items from others', () => {
    expect(portalAccountEntity.matches(portalAccountEntity.toItem(account))).toBe(true);
    expect(portalAccountEntity.matches(requestEntity.toItem(request))).toBe(false);
  });
});

describe('PayerEndpoint', () => {
  it('is keyed by its payer, outside every client, and listed from one gsi1 partition in payer-id order', () => {
    const endpoint = {
      payerId: '87726',
      name: null,
      fhirBaseUrl: 'https://payer.example/fhir',
      tokenUrl: 'https://payer.example/token',
      scope: 'system/Claim.write',
      decisionTimeframes: 'cms-0057-f' as const,
      attachmentSubmission: 'cdex' as const,
      subscriptions: 'rest-hook' as const,
      version: 1,
      createdAt: t0,
      updatedAt: t0,
    };
    expect(payerEndpointEntity.toItem(endpoint)).toStrictEqual({
      pk: 'PAYER#87726',
      sk: 'ENDPOINT',
      gsi1pk: 'PAYERENDPOINTS',
      gsi1sk: '87726',
      entity: 'PayerEndpoint',
      payerId: '87726',
      fhirBaseUrl: 'https://payer.example/fhir',
      tokenUrl: 'https://payer.example/token',
      scope: 'system/Claim.write',
      decisionTimeframes: 'cms-0057-f',
      attachmentSubmission: 'cdex',
      subscriptions: 'rest-hook',
      version: 1,
      createdAt: t0,
      updatedAt: t0,
    });
    expect(payerEndpointEntity.fromItem(payerEndpointEntity.toItem(endpoint))).toStrictEqual(endpoint);
    const named = { ...endpoint, name: 'Example Health' };
    expect(payerEndpointEntity.fromItem(payerEndpointEntity.toItem(named))).toStrictEqual(named);
    // Written before the option existed: held to the timeframes.
    const { decisionTimeframes: _, ...older } = payerEndpointEntity.toItem(endpoint);
    expect(payerEndpointEntity.fromItem(older).decisionTimeframes).toBe('cms-0057-f');
    // Written before CDex: requested documents go in a claim update.
    const { attachmentSubmission: __, ...beforeCdex } = payerEndpointEntity.toItem(endpoint);
    expect(payerEndpointEntity.fromItem(beforeCdex).attachmentSubmission).toBe('claim-update');
    // Written before subscriptions: none made.
    const { subscriptions: ___, ...unsubscribed } = payerEndpointEntity.toItem(endpoint);
    expect(payerEndpointEntity.fromItem(unsubscribed).subscriptions).toBe('none');
  });
});

describe('PayerConnection', () => {
  const connection: StoredPayerConnection = {
    clientId: 'c1',
    organizationId: 'org-1',
    externalId: 'PC-1',
    clientUserId: 'user-1',
    payerId: '87726',
    payerClientId: 'issued-client-id',
    status: 'attention',
    statusReason: 'invalid_client',
    version: 3,
    createdAt: t0,
    updatedAt: t1,
  };

  it('is keyed by its own id, listed by organization, and indexed by organization, payer and status', () => {
    expect(payerConnectionEntity.toItem(connection)).toStrictEqual({
      pk: 'CLIENT#c1#PCONN#PC-1',
      sk: 'PCONN',
      gsi1pk: 'CLIENT#c1#ORG#org-1#PCONN',
      gsi1sk: `${t0}#PC-1`,
      gsi2pk: 'CLIENT#c1#ORG#org-1#PCONN#PAYER#87726#STATUS#attention',
      gsi2sk: `${t0}#PC-1`,
      entity: 'PayerConnection',
      clientId: 'c1',
      organizationId: 'org-1',
      externalId: 'PC-1',
      clientUserId: 'user-1',
      payerId: '87726',
      payerClientId: 'issued-client-id',
      status: 'attention',
      statusReason: 'invalid_client',
      version: 3,
      createdAt: t0,
      updatedAt: t1,
    });
    expect(payerConnectionEntity.fromItem(payerConnectionEntity.toItem(connection))).toStrictEqual(connection);
  });

  it('leaves an unset status reason out of the item, and reads it back as null', () => {
    const active = { ...connection, status: 'active' as const, statusReason: null };
    const item = payerConnectionEntity.toItem(active);
    expect(item).not.toHaveProperty('statusReason');
    expect(item.gsi2pk).toBe('CLIENT#c1#ORG#org-1#PCONN#PAYER#87726#STATUS#active');
    expect(payerConnectionEntity.fromItem(item)).toStrictEqual(active);
  });
});

describe('RpaRun', () => {
  const run: RpaRunRecord = {
    clientId: 'c1',
    externalId: 'A-1',
    runId: '019a0000-0000-7000-8000-000000000001',
    kind: 'view-on-page',
    clientUserId: 'user-1',
    organizationId: 'org-1',
    status: 'queued',
    steps: [{ at: t0, step: 'queued' }],
    enteredValues: {},
    screenshots: [],
    version: 1,
    createdAt: t0,
    updatedAt: t0,
  };

  it("is in its request's item collection, its values entered as a JSON string", () => {
    expect(rpaRunEntity.toItem(run)).toStrictEqual({
      pk: 'CLIENT#c1#REQ#A-1',
      sk: 'RPA#019a0000-0000-7000-8000-000000000001',
      entity: 'RpaRun',
      ...run,
      enteredValues: '{}',
    });
    expect(rpaRunEntity.keys.pk.render({ clientId: 'c1', externalId: 'A-1' })).toBe(
      requestEntity.key({ clientId: 'c1', externalId: 'A-1' }).pk,
    );
    expect(rpaRunEntity.keys.sk.prefix).toBe('RPA#');
  });

  it('reads back every field, the order of the values entered included', () => {
    const ended: RpaRunRecord = {
      ...run,
      batchId: 'b1',
      portalAccountId: 'P-1',
      portalId: 'sandbox',
      status: 'succeeded',
      outcome: 'status_read',
      enteredValues: { zeta: { value: '1', readBack: true }, alpha: { value: '2', readBack: false } },
      screenshots: [{ objectKey: 'c1/rpa/r/1.png', label: 'status', capturedAt: t1 }],
      authorization: { status: 'approved', number: 'N-1', decisionDate: null },
      executionArn: 'arn:aws:states:us-east-1:1:execution:m:b1',
      version: 5,
      updatedAt: t1,
    };
    const read = rpaRunEntity.fromItem(rpaRunEntity.toItem(ended));
    expect(read).toStrictEqual(ended);
    expect(Object.keys(read.enteredValues)).toEqual(['zeta', 'alpha']);
    expect(rpaRunEntity.fromItem(rpaRunEntity.toItem(run))).toStrictEqual(run);
  });

  it('reads values entered by runs recorded before read-back was checked ({field: string}) as not checked', () => {
    const item = { ...rpaRunEntity.toItem(run), enteredValues: '{"memberId":"MBR-1","lastName":"Doe","odd":7}' };
    expect(rpaRunEntity.fromItem(item).enteredValues).toStrictEqual({
      memberId: { value: 'MBR-1', readBack: null },
      lastName: { value: 'Doe', readBack: null },
    });
  });
});

describe('RpaBatch', () => {
  it('keeps the run of each request, in the order they were sent', () => {
    const batch: RpaBatchRecord = {
      clientId: 'c1',
      batchId: 'b1',
      clientUserId: 'user-1',
      organizationId: 'org-1',
      items: [
        { requestExternalId: 'B', runId: 'r2' },
        { requestExternalId: 'A', runId: 'r1' },
      ],
      status: 'running',
      version: 1,
      createdAt: t0,
      updatedAt: t0,
    };
    expect(rpaBatchEntity.toItem(batch)).toStrictEqual({
      pk: 'CLIENT#c1#RPABATCH#b1',
      sk: 'BATCH',
      entity: 'RpaBatch',
      ...batch,
    });
    expect(rpaBatchEntity.fromItem(rpaBatchEntity.toItem(batch))).toStrictEqual(batch);
  });
});

describe('the queues every client writes to: spread over the shards', () => {
  const event = newEvent('webhook.test', 'c1', t0, { webhookId: 'w1' });

  it('OutboxEvent: pending in its shard, by client and event', () => {
    const item = outboxEntity.toItem(outboxItemOf(event));
    const shard = shardOf('c1', event.id);
    expect(item).toMatchObject({ gsi1pk: `OUTBOX#PENDING#${shard}`, gsi1sk: `${t0}#${event.id}`, shard });
    expect(outboxPendingPartitions).toEqual([
      ...['0', '1', '2', '3', '4', '5', '6', '7'].map((s) => `OUTBOX#PENDING#${s}`),
      'OUTBOX#PENDING',
    ]);
  });

  it('WebhookDelivery: by status and shard, the shard kept when the status changes', () => {
    const delivery = newDelivery(
      event,
      { clientId: 'c1', webhookId: 'w1', organizationId: null },
      'test',
      new Date(t0),
    );
    const shard = shardOf('c1', 'w1', delivery.deliveryId);
    expect(webhookDeliveryEntity.toItem(delivery)).toMatchObject({
      gsi1pk: `WEBHOOKDELIVERIES#pending#${shard}`,
      shard,
    });
    const attempt = { at: t1, durationMs: 5, responseStatus: 204, error: null };
    const delivered = afterAttempt(delivery, attempt, new Date(t1));
    expect(webhookDeliveryEntity.toItem(delivered)).toMatchObject({ gsi1pk: `WEBHOOKDELIVERIES#delivered#${shard}` });
    expect(dueDeliveryPartitions.at(-1)).toBe('WEBHOOKDELIVERIES#pending');
    expect(dueDeliveryPartitions.slice(0, 8)).toEqual(
      ['0', '1', '2', '3', '4', '5', '6', '7'].map((s) => `WEBHOOKDELIVERIES#pending#${s}`),
    );
  });

  it('WebhookDelivery: one written before the shards (no shard attribute) goes to its shard when written again', () => {
    const delivery = newDelivery(
      event,
      { clientId: 'c1', webhookId: 'w1', organizationId: null },
      'test',
      new Date(t0),
    );
    const { shard: _, ...legacy } = { ...webhookDeliveryEntity.toItem(delivery), gsi1pk: 'WEBHOOKDELIVERIES#pending' };
    const read = webhookDeliveryEntity.fromItem(legacy);
    expect(webhookDeliveryEntity.toItem({ ...read, version: 2 }).gsi1pk).toBe(
      `WEBHOOKDELIVERIES#pending#${shardOf('c1', 'w1', delivery.deliveryId)}`,
    );
  });
});

describe('tenant entities', () => {
  it('are written whole: version 1, updatedAt = createdAt', () => {
    expect(clientEntity.toItem({ clientId: 'c1', name: 'Acme', createdAt: t0 })).toStrictEqual({
      pk: 'CLIENT#c1',
      sk: 'CLIENT',
      // In the client directory (the admin CLI's replay-events reads every client's events).
      gsi1pk: 'CLIENTS',
      gsi1sk: 'c1',
      entity: 'Client',
      clientId: 'c1',
      name: 'Acme',
      version: 1,
      createdAt: t0,
      updatedAt: t0,
    });
    expect(organizationEntity.toItem({ clientId: 'c1', organizationId: 'o1', name: 'North', createdAt: t0 })).toEqual(
      expect.objectContaining({ pk: 'CLIENT#c1', sk: 'ORG#o1', entity: 'Organization', version: 1, updatedAt: t0 }),
    );
    expect(
      clientUserEntity.toItem({ clientId: 'c1', clientUserId: 'u1', organizationId: 'o1', createdAt: t0 }),
    ).toStrictEqual({
      pk: 'CLIENT#c1',
      sk: 'USER#u1',
      entity: 'ClientUser',
      clientId: 'c1',
      clientUserId: 'u1',
      organizationId: 'o1',
      version: 1,
      createdAt: t0,
      updatedAt: t0,
    });
  });

  it('API keys: found by hash, listed by client, revokedAt only once revoked', () => {
    const key = { keyHash: 'f00d', keyId: 'k1', clientId: 'c1', createdAt: t0 };
    const item = apiKeyEntity.toItem(key);
    expect(item).toStrictEqual({
      pk: 'APIKEY#f00d',
      sk: 'APIKEY',
      gsi1pk: 'CLIENT#c1#APIKEYS',
      gsi1sk: 'k1',
      entity: 'ApiKey',
      ...key,
      version: 1,
      updatedAt: t0,
    });
    expect(apiKeyEntity.fromItem(item)).toStrictEqual(key);
    expect(apiKeyEntity.fromItem({ ...item, revokedAt: t1, version: 2 })).toStrictEqual({ ...key, revokedAt: t1 });
    const expiring = { ...key, expiresAt: t1, lastUsedAt: t0 };
    expect(apiKeyEntity.toItem(expiring)).toStrictEqual({ ...item, expiresAt: t1, lastUsedAt: t0 });
    expect(apiKeyEntity.fromItem(apiKeyEntity.toItem(expiring))).toStrictEqual(expiring);
  });
});

describe('attribute codecs', () => {
  it('json round-trips what JSON can hold', () => {
    const json = attr.json<unknown>();
    for (const value of [{ b: 1, a: [] }, [], 'text', 0, null]) {
      expect(json.read(json.write(value))).toStrictEqual(value);
    }
  });

  it('optional and nullAsAbsent write nothing for unset values', () => {
    expect(attr.optional(attr.string()).write(undefined)).toBeUndefined();
    expect(attr.nullAsAbsent(attr.string()).write(null)).toBeUndefined();
    expect(attr.nullAsAbsent(attr.string()).read(undefined)).toBeNull();
    expect(attr.nullAsAbsent(attr.json<object>()).read('{"a":1}')).toStrictEqual({ a: 1 });
  });
});

describe('defineEntity', () => {
  interface Row {
    id: string;
    note?: string;
    status: 'open' | 'closed';
    closedAt: string | null;
    version: number;
  }
  const declare = defineEntity<Row>();
  const attributes = {
    id: attr.string(),
    note: attr.optional(attr.string()),
    status: attr.string<'open' | 'closed'>(),
    closedAt: attr.nullAsAbsent(attr.string()),
    version: attr.number(),
  };
  const row = declare({ name: 'Row', keys: { pk: 'ROW#<id>', sk: 'ROW' }, attributes });

  it('derives keys, item and record from the declaration', () => {
    const record: Row = { id: 'r1', status: 'open', closedAt: null, version: 1 };
    expect(row.key({ id: 'r1' })).toStrictEqual({ pk: 'ROW#r1', sk: 'ROW' });
    expect(row.toItem(record)).toStrictEqual({
      pk: 'ROW#r1',
      sk: 'ROW',
      entity: 'Row',
      id: 'r1',
      status: 'open',
      version: 1,
    });
    expect(row.fromItem(row.toItem(record))).toStrictEqual(record);
    expect(row.attributeNames).toStrictEqual(['entity', 'id', 'note', 'status', 'closedAt', 'version']);
  });

  it('fills an index key slot from a derived attribute (a shard), stored as well', () => {
    const sharded = declare({
      name: 'Row',
      keys: { pk: 'ROW#<id>', sk: 'ROW', gsi1pk: 'ROWS#<status>#<bucket>', gsi1sk: '<id>' },
      attributes,
      derived: { bucket: (record) => String(record.id.length % 2) },
    });
    const item = sharded.toItem({ id: 'r1', status: 'open', closedAt: null, version: 1 });
    expect(item).toMatchObject({ pk: 'ROW#r1', gsi1pk: 'ROWS#open#0', gsi1sk: 'r1', bucket: '0' });
    expect(sharded.keys.gsi1pk.render({ status: 'closed', bucket: '1' })).toBe('ROWS#closed#1');
  });

  it('refuses an index with one key of its pair', () => {
    expect(() => declare({ name: 'Row', keys: { pk: 'ROW#<id>', sk: 'ROW', gsi1pk: 'ROWS' }, attributes })).toThrow(
      /gsi1/,
    );
  });

  it('holds a declaration to its record (each line below is a compile error: `npm run typecheck`)', () => {
    const keys = { pk: 'ROW#<id>', sk: 'ROW' } as const;
    const { version: _, ...withoutVersion } = attributes;
    const withExtra = { ...attributes, extra: attr.string() };
    const anyStatus = { ...attributes, status: attr.string() };
    const requiredNote = { ...attributes, note: attr.string() };
    const nonNullClosedAt = { ...attributes, closedAt: attr.string() };
    const refused = [
      // @ts-expect-error a key needs every slot of its templates
      () => row.key({}),
      // @ts-expect-error a slot must name a field
      () => declare({ name: 'Row', keys: { pk: 'ROW#<rowId>', sk: 'ROW' }, attributes }),
      // @ts-expect-error a slot must name a string field
      () => declare({ name: 'Row', keys: { pk: 'ROW#<version>', sk: 'ROW' }, attributes }),
      // @ts-expect-error a derived attribute fills an index key's slot, never the primary key's
      () => declare({ name: 'Row', keys: { pk: 'ROW#<b>', sk: 'ROW' }, attributes, derived: { b: () => '0' } }),
      // @ts-expect-error every field is declared
      () => declare({ name: 'Row', keys, attributes: withoutVersion }),
      // @ts-expect-error and nothing else
      () => declare({ name: 'Row', keys, attributes: withExtra }),
      // @ts-expect-error with exactly its type: a status is not any string
      () => declare({ name: 'Row', keys, attributes: anyStatus }),
      // @ts-expect-error an optional field is declared optional
      () => declare({ name: 'Row', keys, attributes: requiredNote }),
      // @ts-expect-error a nullable one, nullable
      () => declare({ name: 'Row', keys, attributes: nonNullClosedAt }),
      // @ts-expect-error an item has the stored name, not the field's
      () => portalAccountEntity.toItem(account).password,
    ];
    // What the compiler prevents would otherwise pass unnoticed at run time:
    for (const mistake of refused) expect(mistake).not.toThrow();
  });
});
