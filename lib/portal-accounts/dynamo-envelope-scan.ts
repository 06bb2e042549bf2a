import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import { portalAccountEntity } from '#lib/entities/portal-account';

/**
 * For the one-off migration of sealed secrets (the admin CLI's reencrypt-portal-secrets, never an
 * API function): portal accounts with an envelope older than `version`, the whole table or one
 * client's. A Scan, filtered: an operator's bounded, rare job, which no function's role may call
 * (docs/infrastructure.md lists no Scan).
 */
export async function* portalAccountsSealedBefore(
  version: number,
  clientId?: string,
): AsyncGenerator<StoredPortalAccount> {
  const older = '(passwordEnvelope.#v < :version OR totpSecretEnvelope.#v < :version)';
  const ofClient = clientId === undefined ? '' : ' AND begins_with(pk, :prefix)';
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: `entity = :entity AND ${older}${ofClient}`,
        ExpressionAttributeNames: { '#v': 'v' },
        ExpressionAttributeValues: {
          ':entity': portalAccountEntity.name,
          ':version': version,
          // The partition key up to the account id: every account of the client, no other client's.
          ...(clientId === undefined ? {} : { ':prefix': portalAccountEntity.key({ clientId, externalId: '' }).pk }),
        },
        ExclusiveStartKey,
      }),
    );
    for (const item of page.Items ?? []) yield portalAccountEntity.fromItem(item as never);
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
}
