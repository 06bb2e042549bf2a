import { Aws, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.ts';

export interface SigningSecretProps {
  encryptionKey: IKey;
  /** What the key signs, for the secret's description. */
  signs: string;
  /** The variable that tells a bound function where the secret is (read by lib/crypto/key-sources.ts). */
  environmentVariable: string;
  /** How long what it signs stays valid: the wait between prepending a new key and dropping the old one. */
  validFor: string;
}

/**
 * An HMAC key shared by every container of the functions that sign or verify with it (a
 * per-container key would break what one container signed for another). 64 alphanumerics decode as
 * base64 to 48 bytes; rotating means prepending a new key, comma-separated: the first signs, all
 * verify. One secret per purpose, so a function that may verify cursors cannot mint scraper tokens.
 */
export class SigningSecret extends Construct {
  readonly secret: Secret;
  readonly encryptionKey: IKey;
  readonly environmentVariable: string;

  constructor(scope: Construct, id: string, props: SigningSecretProps) {
    super(scope, id);
    this.encryptionKey = props.encryptionKey;
    this.environmentVariable = props.environmentVariable;
    this.secret = new Secret(this, 'Secret', {
      description: `Service review: HMAC key(s) of ${props.signs}`,
      encryptionKey: props.encryptionKey,
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const id of ['AwsSolutions-SMG4', 'HIPAA.Security-SecretsManagerRotationEnabled']) {
      Validations.of(this.secret).acknowledge({
        id,
        reason: `Rotation is a deliberate two-step operation (prepend a new key, wait out ${props.validFor}, drop the old key) so that what was signed stays valid; a rotation Lambda would invalidate it at once.`,
      });
    }
  }
}

/**
 * Tells a function where the key is and lets it read that secret only. Granted on the role, not
 * through secret.grantRead, which would also edit the data key's policy in the data stack and tie the
 * two stacks in a cycle.
 */
export const bindSigningSecret = (
  fn: ServiceFunction,
  { secret, encryptionKey, environmentVariable }: SigningSecret,
) => {
  fn.addEnvironment(environmentVariable, secret.secretArn);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
      resources: [secret.secretArn],
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:Decrypt'],
      resources: [encryptionKey.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Aws.REGION}.amazonaws.com` } },
    }),
  );
};
