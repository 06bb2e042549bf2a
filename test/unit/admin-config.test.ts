import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adminTargetOf } from '#scripts/admin-config';

describe('the admin CLI’s target (scripts/admin-config.ts)', () => {
  it('is AWS with ADMIN_TARGET=aws and TABLE_NAME, the stage prod unless API_STAGE says otherwise', () => {
    expect(adminTargetOf({ ADMIN_TARGET: 'aws', TABLE_NAME: 't' })).toEqual({
      kind: 'aws',
      restApiId: undefined,
      apiStage: 'prod',
      usagePlanId: undefined,
    });
    expect(
      adminTargetOf({ ADMIN_TARGET: 'aws', TABLE_NAME: 't', REST_API_ID: 'r', API_STAGE: 'v2', USAGE_PLAN_ID: 'u' }),
    ).toEqual({ kind: 'aws', restApiId: 'r', apiStage: 'v2', usagePlanId: 'u' });
    expect(adminTargetOf({ ADMIN_TARGET: 'aws', TABLE_NAME: 't', API_URL: 'https://api.example/prod/' })).toMatchObject(
      {
        apiUrl: 'https://api.example/prod/',
      },
    );
    expect(() => adminTargetOf({ ADMIN_TARGET: 'aws' })).toThrow(
      'ADMIN_TARGET=aws needs TABLE_NAME (the deployed table name).',
    );
  });

  it('is the running local stack otherwise, found under LOCAL_STATE_DIR', () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'admin-config-'));
    expect(() => adminTargetOf({ LOCAL_STATE_DIR: stateDir })).toThrow(/^No local stack found .*npm start/);
    writeFileSync(join(stateDir, 'stack.json'), '{"env":{}}');
    const stackFile = join(stateDir, 'stack.json');
    expect(adminTargetOf({ LOCAL_STATE_DIR: stateDir })).toEqual({ kind: 'local', stackFile });
    expect(adminTargetOf({ LOCAL_STATE_DIR: stateDir, ADMIN_TARGET: 'local' })).toEqual({ kind: 'local', stackFile });
  });

  it('refuses a target it does not know rather than administer the local stack by mistake', () => {
    expect(() => adminTargetOf({ ADMIN_TARGET: 'AWS', TABLE_NAME: 't' })).toThrow(
      'ADMIN_TARGET must be aws or local (the default), not AWS.',
    );
  });
});
