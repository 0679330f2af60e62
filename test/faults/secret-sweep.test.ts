/**
 * The fault set-ups' secret sweep (issue 18) must find what it is meant to find: a master key, provider
 * key or minted key in a spawned gateway's output or in its /metrics, named by kind and redacted.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { SpawnedGateway } from '../support/spawn-gateway.ts';
import { SecretSweep } from './support/secret-sweep.ts';

const MASTER = 'sk-master-sweep-test';
const PROVIDER = 'sk-provider-sweep-test';
const MINTED = 'sk-minted-sweep-test-123';

function gateway(output: string, baseUrl = 'http://127.0.0.1:9', running = false): SpawnedGateway {
  const child = { exitCode: running ? null : 0, signalCode: null };
  return { output: () => output, baseUrl, child } as unknown as SpawnedGateway;
}

function sweep(): SecretSweep {
  const s = new SecretSweep(MASTER);
  s.config(`model_list:\n  - params: { provider: openai, model: m, api_key: ${PROVIDER} }\n`);
  s.minted(MINTED);
  return s;
}

describe('secret sweep of spawned gateways', () => {
  it('passes output that holds no secret', async () => {
    expect(await sweep().sweep([gateway('listening on 127.0.0.1:4000\n')])).toBeUndefined();
  });

  it('names each kind found in an output, redacted', async () => {
    const found = await sweep().sweep([
      gateway(`config master_key=${MASTER}\n`),
      gateway(`upstream auth ${PROVIDER} for key ${MINTED}\n`),
    ]);
    expect(found).toContain('master key in the output of gateway 0');
    expect(found).toContain('provider key in the output of gateway 1');
    expect(found).toContain('minted API key in the output of gateway 1');
    for (const secret of [MASTER, PROVIDER, MINTED]) expect(found).not.toContain(secret);
  });

  it('scrapes /metrics of a live process', async () => {
    const server = createServer((_request, response) => response.end(`# label key="${MINTED}"\n`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const found = await sweep().sweep([gateway('', url, true)]);
      expect(found).toContain('minted API key in /metrics of gateway 0');
    } finally {
      server.close();
    }
  });
});
