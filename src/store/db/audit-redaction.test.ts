/** The audit log's redaction rule: secret-named fields become "REDACTED" at any depth; others stay. */
import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets } from './audit-redaction.ts';

describe('redactSecrets', () => {
  it('redacts key hashes, sealed MCP tokens, auth_config and salts', () => {
    expect(
      redactSecrets({
        key_hash: 'abc',
        key_prefix: 'sk-AbC',
        auth_token_sealed: 'v1.sealed',
        auth_config: { token: 't' },
        salt_key: 's',
        auth_mode: 'bearer',
      }),
    ).toEqual({
      key_hash: REDACTED,
      key_prefix: 'sk-AbC',
      auth_token_sealed: REDACTED,
      auth_config: REDACTED,
      salt_key: REDACTED,
      auth_mode: 'bearer',
    });
  });

  it('redacts secret-named fields inside metadata and arrays, and keeps null as null', () => {
    expect(
      redactSecrets({
        metadata: { owner: 'ops', api_key: 'sk-1', nested: [{ password: 'p', note: 'n' }] },
        auth_token_sealed: null,
      }),
    ).toEqual({
      metadata: { owner: 'ops', api_key: REDACTED, nested: [{ password: REDACTED, note: 'n' }] },
      auth_token_sealed: null,
    });
  });

  it('leaves limits, ids and scope values alone', () => {
    const record = { key_id: 'key_1', scope_type: 'api_key', tpm_limit: 5, model_tpm_limit: { a: 1 } };
    expect(redactSecrets(record)).toEqual(record);
  });
});
