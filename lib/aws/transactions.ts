import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { VersionConflict } from '#lib/concurrency';

/*
 * Several items written all or none (TransactWriteItems): a change and what must never be without it
 * (its history entry, its outbox event: docs/events.md). Locally dynalite gets transactions from the
 * local stack (local/dynalite-transactions.ts); on AWS they are DynamoDB's own.
 */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Why DynamoDB cancelled a transaction, item by item (`None` for the items that were fine). */
const reasonsOf = (error: unknown): string[] | undefined =>
  (error as Error | undefined)?.name === 'TransactionCanceledException'
    ? ((error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? []).map(
        (reason) => reason.Code ?? 'None',
      )
    : undefined;

/**
 * Writes every item or none: undefined when written; when DynamoDB cancelled it, its reason per item
 * (`ConditionalCheckFailed`, `TransactionConflict`: another transaction held one of the items…), for
 * callers that act on which item refused.
 */
export const transactWriteOrReasons = async (items: TransactItem[]): Promise<string[] | undefined> => {
  try {
    await dynamo.send(new TransactWriteCommand({ TransactItems: items }));
    return undefined;
  } catch (error) {
    const reasons = reasonsOf(error);
    if (reasons) return reasons;
    throw error;
  }
};

/**
 * Writes every item or none. A refused condition (the item changed since it was read, or is gone) or a
 * concurrent transaction on one of the items becomes VersionConflict: the caller reads again and retries.
 */
export const transactWrite = async (items: TransactItem[]): Promise<void> => {
  try {
    await dynamo.send(new TransactWriteCommand({ TransactItems: items }));
  } catch (error) {
    const reasons = reasonsOf(error);
    if (reasons?.some((code) => code === 'ConditionalCheckFailed' || code === 'TransactionConflict')) {
      throw new VersionConflict();
    }
    throw error;
  }
};
