import { Aws, Stack } from 'aws-cdk-lib';
import {
  AccountRootPrincipal,
  AnyPrincipal,
  Effect,
  Grant,
  type IGrantable,
  PolicyDocument,
  PolicyStatement,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { PURPOSE as PORTAL_ACCOUNT_CREDENTIAL } from '#lib/portal-accounts/credentials';
import { PURPOSE as WEBHOOK_SIGNING_SECRET } from '#lib/webhooks/signing-secrets';
import type { ServiceFunction } from './service-function.ts';

/**
 * The name of a role that may decrypt with the secrets key (the run credentials function's, the webhook
 * delivery functions'): fixed, so that the secrets key's policy (data stack) can name it without a
 * reference to the automation or events stack, which depend on the data stack (a reference back would be
 * a cycle).
 */
export const secretsReaderRoleName = (stackName: string, functionName: string) => `${stackName}-${functionName}`;

/** Managing the secrets key, without using it (no Decrypt, no grants, no re-encryption). */
const KEY_ADMINISTRATION = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RevokeGrant',
  'kms:RotateKeyOnDemand',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
];

/** Using it: what route roles (encrypt) and the run credentials function (decrypt) are granted through IAM. */
const KEY_USE = ['kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:Decrypt'];

/**
 * The secrets key's own policy. Administration and use are separate statements, both delegated to
 * IAM (so the account's roles need an IAM grant as well); and whatever IAM grants, nobody but the
 * named reader roles may decrypt: an explicit deny, which no IAM allow (not even `kms:*` on `*`)
 * overrides. Which secrets each reader opens is its IAM grant's (the context's `purpose`).
 */
const secretsKeyPolicy = (readerRoleArns: readonly string[]) => {
  const account = new AccountRootPrincipal();
  return new PolicyDocument({
    statements: [
      new PolicyStatement({
        sid: 'KeyAdministrationThroughIam',
        principals: [account],
        actions: KEY_ADMINISTRATION,
        resources: ['*'],
      }),
      new PolicyStatement({ sid: 'KeyUseThroughIam', principals: [account], actions: KEY_USE, resources: ['*'] }),
      new PolicyStatement({
        sid: 'DecryptOnlyByNamedReaders',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['kms:Decrypt'],
        resources: ['*'],
        ...(readerRoleArns.length > 0
          ? { conditions: { ArnNotEquals: { 'aws:PrincipalArn': [...readerRoleArns] } } }
          : {}),
      }),
    ],
  });
};

export interface EncryptionKeysProps {
  /**
   * Names of the roles (secretsReaderRoleName) that alone may decrypt with the secrets key: the run
   * credentials function (portal-account secrets) and the webhook delivery functions (signing secrets).
   */
  secretsReaderRoleNames: readonly string[];
}

/**
 * The two customer-managed keys. `data` encrypts everything at rest (table, attachments bucket,
 * log groups); `secrets` envelope-encrypts portal-account credentials and webhook signing secrets, so
 * that a principal that can read the table still cannot read a password or a signing secret: only the
 * named readers' roles may decrypt with it (its key policy), each only its own kind (the run credentials
 * function portal secrets, the webhook delivery functions signing secrets: their IAM grants); the
 * browser workers that type the password ask the run credentials function.
 */
export class EncryptionKeys extends Construct {
  readonly data: Key;
  readonly secrets: Key;

  constructor(scope: Construct, id: string, props: EncryptionKeysProps) {
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
      description: 'Service review: envelope encryption of portal-account secrets and webhook signing secrets',
      alias: `${stackName}/portal-secrets`,
      enableKeyRotation: true,
      policy: secretsKeyPolicy(
        props.secretsReaderRoleNames.map((name) => `arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:role/${name}`),
      ),
    });
  }
}

/** Every use of the secrets key must name the tenant, so a data key is bound to one client's items. */
const clientIdInEncryptionContext = { 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['clientId'] } };

/**
 * A reader opens one kind of secret: the encryption context's `purpose` (lib/portal-accounts/credentials.ts,
 * lib/webhooks/signing-secrets.ts), which KMS checks with each Decrypt the Encryption SDK or the v1 envelope
 * makes, and a client.
 */
const decryptingOnly = (purpose: string) => ({
  StringEquals: { 'kms:EncryptionContext:purpose': purpose },
  ...clientIdInEncryptionContext,
});

/**
 * Lets a function create data keys for portal-account secrets (encrypt only) and tells it which
 * key to use (SECRETS_KEY_ID). GenerateDataKey alone: the Encryption SDK's KMS keyring, with one
 * generator key and no other, never calls Encrypt (lib/crypto/kms-keyring.ts). Decryption is
 * deliberately not part of this: see `grantSecretsDecrypt`.
 */
export const bindSecretsKey = (fn: ServiceFunction, key: IKey) => {
  fn.addEnvironment('SECRETS_KEY_ID', key.keyArn);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:GenerateDataKey'],
      resources: [key.keyArn],
      conditions: clientIdInEncryptionContext,
    }),
  );
};

/**
 * For the run credentials function: the only principal that may ever decrypt portal secrets, and only
 * those (not the webhook signing secrets the same key seals).
 */
export const grantSecretsDecrypt = (grantee: IGrantable, key: IKey) =>
  Grant.addToPrincipal({
    grantee,
    actions: ['kms:Decrypt'],
    resourceArns: [key.keyArn],
    conditions: decryptingOnly(PORTAL_ACCOUNT_CREDENTIAL),
  });

/**
 * `webhookSecrets: 'open'` (the webhook delivery functions): decrypts webhook signing secrets, and
 * nothing else with that key: only data keys whose encryption context says `purpose:
 * webhook-signing-secret` and names a client (what lib/webhooks/seal-signing-secret.ts seals with).
 * KMS checks the context the Encryption SDK passes with each Decrypt; a portal-account secret's says
 * `portal-account-credential`. The role must also be one of the key policy's named readers.
 */
export const bindWebhookSecretsOpen = (fn: ServiceFunction, key: IKey) => {
  fn.addEnvironment('SECRETS_KEY_ID', key.keyArn);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:Decrypt'],
      resources: [key.keyArn],
      conditions: decryptingOnly(WEBHOOK_SIGNING_SECRET),
    }),
  );
};

/**
 * `secrets: 'decrypt'` (the run credentials function's access): decrypts portal-account secrets (their
 * purpose, a client), and nothing else with that key; SECRETS_KEY_ID selects the KMS keyring (lib/crypto/secrets-keyring.ts).
 */
export const bindSecretsDecrypt = (fn: ServiceFunction, key: IKey) => {
  fn.addEnvironment('SECRETS_KEY_ID', key.keyArn);
  grantSecretsDecrypt(fn, key);
};
