import { Aws, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.ts';

/**
 * The HMAC key of scraper tokens (lib/rpa/scraper-token.ts), shared by the function that signs them
 * and the one that verifies them. Its own secret, so that no other function can mint a token. 64
 * alphanumerics decode as base64 to 48 bytes; rotating means prepending a new key, comma-separated:
 * the first signs, all verify.
 */
export class RpaTokenSecret extends Construct {
  readonly secret: Secret;
  readonly encryptionKey: IKey;

  constructor(scope: Construct, id: string, props: { encryptionKey: IKey }) {
    super(scope, id);
    this.encryptionKey = props.encryptionKey;
    this.secret = new Secret(this, 'Secret', {
      description: 'Service review: HMAC key(s) of scraper-session tokens',
      encryptionKey: props.encryptionKey,
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const id of ['AwsSolutions-SMG4', 'HIPAA.Security-SecretsManagerRotationEnabled']) {
      Validations.of(this.secret).acknowledge({
        id,
        reason:
          'Rotation is a deliberate two-step operation (prepend a new key, wait out the 15-minute tokens, drop the old key) so that tokens in flight stay valid; a rotation Lambda would invalidate them at once.',
      });
    }
  }
}

/**
 * Tells a function where the token key is (RPA_TOKEN_SECRET_ARN) and lets it read that secret only.
 * Signing and verifying both need the key (HMAC). Granted on the role, as for the cursor secret, so
 * the data key's policy in the data stack is not edited from the API stack.
 */
export const bindRpaTokenSecret = (fn: ServiceFunction, { secret, encryptionKey }: RpaTokenSecret) => {
  fn.addEnvironment('RPA_TOKEN_SECRET_ARN', secret.secretArn);
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
