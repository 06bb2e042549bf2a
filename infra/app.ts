import { buildServiceReviewApp } from '#infra/service-review-app';

// Entry point of the CDK CLI (cdk.json). The account and region are those of the caller's AWS credentials.
buildServiceReviewApp({
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
