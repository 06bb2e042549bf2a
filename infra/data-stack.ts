import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AttachmentsBucket } from '#infra/constructs/attachments-bucket';
import { EncryptionKeys, type EncryptionKeysProps } from '#infra/constructs/encryption-keys';
import { ServiceTable } from '#infra/constructs/service-table';
import { SigningSecret } from '#infra/constructs/signing-secret';

export interface DataStackProps extends StackProps, EncryptionKeysProps {}

/**
 * Everything that holds PHI or keys to it: the KMS keys, the table and the attachments bucket (the
 * audit trail of their use is the audit stack's, infra/audit-stack.ts).
 * Kept apart from the API so the API stack can be replaced freely; every resource here is retained
 * when the stack is deleted, and the stack itself is termination-protected.
 */
export class DataStack extends Stack {
  readonly keys: EncryptionKeys;
  readonly table: ServiceTable;
  readonly attachments: AttachmentsBucket;
  readonly cursorSigning: SigningSecret;
  readonly rpaTokens: SigningSecret;
  readonly requestFingerprints: SigningSecret;

  constructor(scope: Construct, id: string, props: DataStackProps) {
    const { secretsReaderRoleNames, ...stackProps } = props;
    super(scope, id, { terminationProtection: true, ...stackProps });
    this.keys = new EncryptionKeys(this, 'Keys', { secretsReaderRoleNames });
    this.table = new ServiceTable(this, 'Table', { encryptionKey: this.keys.data });
    this.attachments = new AttachmentsBucket(this, 'Attachments', { encryptionKey: this.keys.data });
    this.cursorSigning = new SigningSecret(this, 'CursorSigning', {
      encryptionKey: this.keys.data,
      signs: 'pagination cursors',
      environmentVariable: 'CURSOR_SIGNING_SECRET_ARN',
      validFor: 'the cursors in flight',
    });
    this.rpaTokens = new SigningSecret(this, 'RpaTokens', {
      encryptionKey: this.keys.data,
      signs: 'scraper-session tokens',
      environmentVariable: 'RPA_TOKEN_SECRET_ARN',
      validFor: 'the 15-minute tokens',
    });
    this.requestFingerprints = new SigningSecret(this, 'RequestFingerprints', {
      encryptionKey: this.keys.data,
      signs: 'idempotency request fingerprints',
      environmentVariable: 'IDEMPOTENCY_FINGERPRINT_SECRET_ARN',
      validFor: 'the 24-hour idempotency records',
    });
  }
}
