import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { portalAccountEntity, portalAccountPayerEntity, type StoredPortalAccount } from '#lib/entities/portal-account';

/*
 * The payer index (docs/data-model.md, pattern 13): one entry per payer of an account, written after
 * the account (the table has no transactions). An entry the account no longer agrees with (a payer
 * removed by a concurrent write, an account deleted or moved meanwhile) is skipped on read; a
 * missing one (a failed write) is written again by the account's next write, or by the backfill.
 */
const payerEntriesOf = (account: StoredPortalAccount) =>
  account.payerIds.map((payerId) =>
    portalAccountPayerEntity.toItem({
      clientId: account.clientId,
      organizationId: account.organizationId,
      externalId: account.externalId,
      payerId,
      version: account.version,
      createdAt: account.createdAt,
      updatedAt: account.updatedAt,
    }),
  );

export const putPayerEntries = (account: StoredPortalAccount) =>
  Promise.all(
    payerEntriesOf(account).map((item) => dynamo.send(new PutCommand({ TableName: tableName(), Item: item }))),
  );

export const deletePayerEntries = (clientId: string, externalId: string, payerIds: readonly string[]) =>
  Promise.all(
    payerIds.map((payerId) =>
      dynamo.send(
        new DeleteCommand({
          TableName: tableName(),
          Key: portalAccountPayerEntity.key({ clientId, externalId, payerId }),
        }),
      ),
    ),
  );

/** The payer ids an item (an account's previous state, from ReturnValues) lists. */
export const payerIdsOf = (item: Record<string, unknown> | undefined) =>
  item && portalAccountEntity.matches(item) ? portalAccountEntity.fromItem(item).payerIds : [];
