import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

describe('the logger', () => {
  it('redacts credentials in headers, MCP auth config and top-level secret fields', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        headers: { authorization: 'Bearer sk-secret-1', 'api-key': 'azure-secret', 'x-api-key': 'x-secret' },
        auth_config: { token: 'mcp-secret' },
        api_key: 'sk-secret-2',
        master_key: 'sk-master-secret',
      },
      'something',
    );
    const line = lines.join('');
    for (const secret of [
      'sk-secret-1',
      'azure-secret',
      'x-secret',
      'mcp-secret',
      'sk-secret-2',
      'sk-master-secret',
    ]) {
      expect(line).not.toContain(secret);
    }
    expect(line).toContain('[redacted]');
  });
});
