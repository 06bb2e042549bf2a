import { Aws, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { PAYER_KEY_PURPOSE, PAYER_KEY_PURPOSE_TAG } from '#lib/payer-api/signing-keys/kms-key-tags';
import type { ServiceFunction } from './service-function.ts';

/**
 * Lets ONE function sign SMART client assertions with the API clients' payer signing keys
 * (docs/payer-api.md, "Keepers"): kms:Sign, and kms:GetPublicKey, on the account's KMS keys that
 * carry the payer-assertion purpose tag, and on no other key. The keys are created at run time by an
 * operator (`rotate-payer-signing-key`), after the deployment, so no ARN can be named: the grant is
 * attribute-based (`aws:ResourceTag`), and Sign is further held to the one algorithm and to raw messages.
 * No function is granted kms:CreateKey, kms:ScheduleKeyDeletion or tagging: those stay the operator's.
 * Call it for the function that signs, and for no other (test/infra/payer-assertion-signing.test.ts).
 */
const TAGGED_FOR_PAYER_ASSERTIONS = { [`aws:ResourceTag/${PAYER_KEY_PURPOSE_TAG}`]: PAYER_KEY_PURPOSE };

export const bindPayerAssertionSigning = (fn: Pick<ServiceFunction, 'role'>) => {
  const keys = `arn:${Aws.PARTITION}:kms:${Aws.REGION}:${Aws.ACCOUNT_ID}:key/*`;
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:Sign'],
      resources: [keys],
      conditions: {
        StringEquals: {
          ...TAGGED_FOR_PAYER_ASSERTIONS,
          'kms:SigningAlgorithm': 'RSASSA_PKCS1_V1_5_SHA_384',
          'kms:MessageType': 'RAW',
        },
      },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:GetPublicKey'],
      resources: [keys],
      conditions: { StringEquals: TAGGED_FOR_PAYER_ASSERTIONS },
    }),
  );
  Validations.of(fn.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*]',
    reason:
      'Payer signing keys are created at run time by an operator (one per API client), so their ARNs cannot be listed: the grant is held to keys tagged for payer assertions (aws:ResourceTag), and kms:Sign to RSASSA_PKCS1_V1_5_SHA_384 over raw messages.',
  });
};
