/**
 * Where the gateway may connect on an operator's or admin's behalf (provider `api_base`, MCP
 * `base_url`): http(s) only, no credentials inside the URL, never a link-local or cloud-metadata
 * address (by name, by literal, or as resolved by DNS at connect time), and, when an allow-list of
 * upstream hosts is configured, only those hosts. Loopback and private ranges stay allowed by default:
 * local model servers (Ollama, vLLM) and MCP servers live there.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';

export interface UpstreamUrlPolicy {
  /** Host names (exact, or `*.example.com` for any subdomain) the gateway may connect to; null: any. */
  readonly allowedHosts: readonly string[] | null;
}

export const OPEN_POLICY: UpstreamUrlPolicy = Object.freeze({ allowedHosts: null });

/** Cloud metadata services reached by name. */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
]);

/** Why the URL may not be used as an upstream, or undefined when it may. */
export function upstreamUrlProblem(raw: string, policy: UpstreamUrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (url.username !== '' || url.password !== '') {
    return 'must not carry credentials (user:password@); give the token in auth_config or api_key instead';
  }
  const host = hostOf(url);
  if (METADATA_NAMES.has(host) || forbiddenAddress(host)) {
    return `'${host}' is a link-local or cloud-metadata address, which upstreams may not use`;
  }
  if (policy.allowedHosts !== null && !hostAllowed(host, policy.allowedHosts)) {
    return `'${host}' is not in general_settings.upstream_allowed_hosts`;
  }
  return undefined;
}

/** The URL with every query value replaced: query strings may hold tokens, so they are never shown. */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  if (url.search === '') return raw;
  const redacted = [...url.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=REDACTED`);
  url.search = redacted.join('&');
  return url.toString();
}

/** True for link-local, unspecified and cloud-metadata IP literals (IPv4, IPv6, IPv4-mapped IPv6). */
export function forbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return forbiddenIpv4(address);
  if (family !== 6) return false;
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return forbiddenIpv4(mapped[1]!);
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower); // how URL writes them
  if (mappedHex) {
    const high = Number.parseInt(mappedHex[1]!, 16);
    const low = Number.parseInt(mappedHex[2]!, 16);
    return forbiddenIpv4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  if (lower === '::') return true;
  if (/^fe[89ab][0-9a-f]?:/.test(lower)) return true; // fe80::/10 link-local
  return lower === 'fd00:ec2::254'; // AWS metadata over IPv6
}

function forbiddenIpv4(address: string): boolean {
  const [a, b] = address.split('.').map(Number) as [number, number];
  if (a === 169 && b === 254) return true; // link-local, incl. 169.254.169.254 metadata
  if (a === 0) return true; // "this network": reaches the local host
  return address === '100.100.100.200'; // Alibaba Cloud metadata
}

function hostOf(url: URL): string {
  const host = url.hostname.toLowerCase();
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host.replace(/\.$/, '');
}

function hostAllowed(host: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern;
  });
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `dns.lookup` for upstream connections that refuses names resolving to forbidden addresses, so a
 * DNS name cannot point the gateway at a metadata service after its URL was accepted.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses) => {
    if (error) return callback(error, []);
    const allowed = addresses.filter((entry) => !forbiddenAddress(entry.address));
    if (allowed.length === 0) {
      const refused: NodeJS.ErrnoException = new Error(
        `upstream host ${hostname} resolves only to link-local or metadata addresses`,
      );
      refused.code = 'EUPSTREAMFORBIDDEN';
      return callback(refused, []);
    }
    if (options.all) return callback(null, allowed);
    return callback(null, allowed[0]!.address, allowed[0]!.family);
  });
}
