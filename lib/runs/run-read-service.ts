import { dynamoRunStore } from './dynamo-run-store.ts';
import { runReadService } from './runs.ts';
import { sfnAutomationStarter } from './sfn-automation-starter.ts';

/**
 * Reading runs and batches on DynamoDB and Step Functions (an execution's status), built once per cold
 * start: what GET rpa-run and GET check-auth-status use, so their bundles carry neither the scraper
 * token's key (jose, Secrets Manager) nor the screenshots' S3 client (scraper-access-service.ts wires those).
 */
export const runReads = runReadService({ runs: dynamoRunStore, automation: sfnAutomationStarter });
