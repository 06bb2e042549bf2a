import { Aws, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.ts';

/**
 * The HMAC key of pagination cursors, shared by every container of the list and filter functions
 * (a per-container key would break cursors across instances). 64 alphanumerics decode as base64
 * to 48 bytes; rotating means prepending a new key, comma-separated: the first signs, all verify.
 */
export class CursorSigningSecret extends Construct {
  readonly secret: Secret;
  readonly encryptionKey: IKey;

  constructor(scope: Construct, id: string, props: { encryptionKey: IKey }) {
    super(scope, id);
    this.encryptionKey = props.encryptionKey;
    this.secret = new Secret(this, 'Secret', {
      description: 'Service review: HMAC key(s) of pagination cursors',
      encryptionKey: props.encryptionKey,
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const id of ['AwsSolutions-SMG4', 'HIPAA.Security-SecretsManagerRotationEnabled']) {
      Validations.of(this.secret).acknowledge({
        id,
        reason:
          'Rotation is a deliberate two-step operation (prepend a new key, let old cursors expire, drop the old key) so that cursors in flight stay valid; a rotation Lambda would invalidate them at once.',
      });
    }
  }
}

/**
 * Tells a function where the cursor key is (CURSOR_SIGNING_SECRET_ARN) and lets it read that secret
 * only. Granted on the role, not through secret.grantRead, which would also edit the data key's
 * policy in the data stack and tie the two stacks in a cycle.
 */
export const bindCursorSigningSecret = (fn: ServiceFunction, { secret, encryptionKey }: CursorSigningSecret) => {
  fn.addEnvironment('CURSOR_SIGNING_SECRET_ARN', secret.secretArn);
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
