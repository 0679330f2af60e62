/**
 * Secret scanning of spawned gateways (issue 18): at the end of a fault set-up, each child's output and
 * one /metrics scrape per live process are searched for the master key, the provider keys of the config
 * and every key minted meanwhile. In-process gateways get the full scanner (test/support); a spawned one
 * shows only what it printed and what it exposes, which is what this covers.
 */
import { SecretScanner } from '../../support/secret-scanner.ts';
import type { SpawnedGateway } from '../../support/spawn-gateway.ts';

export class SecretSweep {
  private readonly scanner = new SecretScanner();
  private readonly masterKey: string;

  constructor(masterKey: string) {
    this.masterKey = masterKey;
    this.scanner.add(masterKey, 'master key');
  }

  /** Registers the provider keys (`api_key:` values) of a config file's text. */
  config(yaml: string): void {
    for (const match of yaml.matchAll(/\bapi_key: *"?([^\s,}"]+)/g))
      this.scanner.add(match[1], 'provider key');
  }

  /** Registers a key minted through the admin API (call with every creation answer's `key`). */
  minted(key: unknown): void {
    this.scanner.add(key, 'minted API key');
  }

  /** Scans every gateway's output and the /metrics of those still running; the findings, redacted. */
  async sweep(gateways: readonly SpawnedGateway[]): Promise<string | undefined> {
    for (const [index, gateway] of gateways.entries()) {
      this.scanner.scan(gateway.output(), `the output of gateway ${index}`);
      const { child } = gateway;
      if (child.exitCode !== null || child.signalCode !== null) continue;
      try {
        const response = await fetch(`${gateway.baseUrl}/metrics`, {
          headers: { authorization: `Bearer ${this.masterKey}` },
          signal: AbortSignal.timeout(5_000),
        });
        this.scanner.scan(await response.text(), `/metrics of gateway ${index}`);
      } catch {
        // a process that cannot answer exposes nothing; its output was scanned above
      }
    }
    try {
      this.scanner.assertClean();
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }
}
