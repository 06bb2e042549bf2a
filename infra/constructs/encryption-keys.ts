import { Aws, Stack } from 'aws-cdk-lib';
import { Grant, type IGrantable, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.ts';

/**
 * The two customer-managed keys. `data` encrypts everything at rest (table, attachments bucket,
 * log groups); `secrets` envelope-encrypts portal-account credentials, so that a principal that
 * can read the table still cannot read a password without a separate grant on this key.
 */
export class EncryptionKeys extends Construct {
  readonly data: Key;
  readonly secrets: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;
    this.data = new Key(this, 'DataKey', {
      description: 'Service review: data at rest (table, attachments, logs)',
      alias: `${stackName}/data`,
      enableKeyRotation: true,
    });
    // CloudWatch Logs encrypts with the key in its own name, bound to log groups of this account and region.
    this.data.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal(`logs.${Aws.REGION}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:*`,
          },
        },
      }),
    );
    this.secrets = new Key(this, 'SecretsKey', {
      description: 'Service review: envelope encryption of portal-account secrets',
      alias: `${stackName}/portal-secrets`,
      enableKeyRotation: true,
    });
  }
}

/** Every use of the secrets key must name the tenant, so a data key is bound to one client's items. */
const clientIdInEncryptionContext = { 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['clientId'] } };

/**
 * Lets a function create data keys for portal-account secrets (encrypt only) and tells it which
 * key to use (SECRETS_KEY_ID). Decryption is deliberately not part of this: see `grantSecretsDecrypt`.
 */
export const bindSecretsKey = (fn: ServiceFunction, key: IKey) => {
  fn.addEnvironment('SECRETS_KEY_ID', key.keyArn);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:GenerateDataKey', 'kms:Encrypt'],
      resources: [key.keyArn],
      conditions: clientIdInEncryptionContext,
    }),
  );
};

/** For the RPA browser worker: the only principal that may ever decrypt portal secrets. */
export const grantSecretsDecrypt = (grantee: IGrantable, key: IKey) =>
  Grant.addToPrincipal({
    grantee,
    actions: ['kms:Decrypt'],
    resourceArns: [key.keyArn],
    conditions: clientIdInEncryptionContext,
  });

/**
 * `secrets: 'decrypt'` (the browser worker's access): decrypts portal-account secrets, and nothing
 * else with that key; SECRETS_KEY_ID selects the KMS keyring (lib/crypto/config.ts).
 */
export const bindSecretsDecrypt = (fn: ServiceFunction, key: IKey) => {
  fn.addEnvironment('SECRETS_KEY_ID', key.keyArn);
  grantSecretsDecrypt(fn, key);
};
