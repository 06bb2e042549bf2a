import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut, isConditionFailure, orVersionConflict } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import {
  type LastLogin,
  type PortalAccountAttention,
  portalAccountEntity,
  type StoredPortalAccount,
} from '#lib/entities/portal-account';
import { accountOf, indexSearchText } from './dynamo-portal-account-grams.ts';
import { deletePayerEntries, payerIdsOf, putPayerEntries } from './dynamo-portal-account-payers.ts';

/*
 * The adapter's writes: each one conditional single-item write of the account, then its payer index
 * entries (dynamo-portal-account-payers.ts) and search index entries (dynamo-portal-account-grams.ts).
 * A failed condition is a VersionConflict.
 */

export async function createAccount(account: StoredPortalAccount): Promise<void> {
  await conditionalPut(portalAccountEntity.toItem(account), 'attribute_not_exists(pk)');
  await Promise.all([putPayerEntries(account), indexSearchText(undefined, account)]);
}

export async function updateAccount(account: StoredPortalAccount, expectedVersion: number): Promise<void> {
  const { Attributes: previous } = await orVersionConflict(
    dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: portalAccountEntity.toItem(account),
        ConditionExpression: 'version = :expected',
        ExpressionAttributeValues: { ':expected': expectedVersion },
        ReturnValues: 'ALL_OLD',
      }),
    ),
  );
  // Every entry again (an organization move changes their index key; a lost one comes back).
  const removed = payerIdsOf(previous).filter((payerId) => !account.payerIds.includes(payerId));
  await Promise.all([
    putPayerEntries(account),
    deletePayerEntries(account.clientId, account.externalId, removed),
    indexSearchText(accountOf(previous), account),
  ]);
}

export async function deleteAccount(clientId: string, externalId: string, expectedVersion: number): Promise<void> {
  const { Attributes: previous } = await orVersionConflict(
    dynamo.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: portalAccountEntity.key({ clientId, externalId }),
        ConditionExpression: 'version = :expected',
        ExpressionAttributeValues: { ':expected': expectedVersion },
        ReturnValues: 'ALL_OLD',
      }),
    ),
  );
  await Promise.all([
    deletePayerEntries(clientId, externalId, payerIdsOf(previous)),
    indexSearchText(accountOf(previous), undefined),
  ]);
}

export async function setLastLogin(
  clientId: string,
  externalId: string,
  lastLogin: LastLogin,
  attention?: PortalAccountAttention,
): Promise<boolean> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: portalAccountEntity.key({ clientId, externalId }),
        UpdateExpression: `SET lastLogin = :lastLogin, ${attention ? 'attention = :attention, ' : ''}updatedAt = :at ADD version :one`,
        ConditionExpression: 'attribute_exists(pk) AND entity = :entity',
        ExpressionAttributeValues: {
          ':lastLogin': portalAccountEntity.attributes.lastLogin.write(lastLogin),
          ...(attention ? { ':attention': portalAccountEntity.attributes.attention.write(attention) } : {}),
          ':at': lastLogin.at,
          ':one': 1,
          ':entity': portalAccountEntity.name,
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
