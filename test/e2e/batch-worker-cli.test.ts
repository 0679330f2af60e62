/**
 * The `switchboard batch-worker` command's refusals (issue 15): with batches disabled in the
 * configuration it exits 2 saying so (there is nothing for it to run), a bad --health-port is a usage
 * error (exit 2), and --help documents the command and its health listener.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/spawn-gateway.ts';

describe('switchboard batch-worker', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-batch-worker-cli-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('exits 2 with a clear message when batches are disabled', async () => {
    const result = await runCli(['batch-worker', '--data-dir', dataDir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('batches are disabled');
    expect(result.stderr).toContain('general_settings.embeddings_batch_enabled');
  });

  it('refuses a --health-port that is not a port with exit 2', async () => {
    const result = await runCli(['batch-worker', '--health-port', 'http', '--data-dir', dataDir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--health-port must be an integer from 0 to 65535');
  });

  it('documents the command and its health listener in --help', async () => {
    const result = await runCli(['batch-worker', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('switchboard batch-worker');
    expect(result.stdout).toContain('--health-port');
  });
});
