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

/** fd00:ec2::254, AWS metadata over IPv6. */
const AWS_METADATA_V6 = [0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54];

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

/**
 * True for link-local, unspecified and cloud-metadata IP literals: IPv4, IPv6, and IPv6 literals that
 * carry an IPv4 address (mapped, compatible, SIIT, NAT64, 6to4), which reach that IPv4 address through
 * the host's stack or a translator, so `[64:ff9b::a9fe:a9fe]` is the metadata service too (issue 25).
 */
export function forbiddenAddress(address: string): boolean {
  const bare = address.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names an interface, not an address
  const family = isIP(bare);
  if (family === 4) return forbiddenIpv4(bare);
  if (family !== 6) return false;
  const bytes = ipv6Bytes(bare);
  if (bytes.every((byte) => byte === 0)) return true; // :: (unspecified)
  if (bytes.every((byte, index) => byte === (index === 15 ? 1 : 0))) return false; // ::1, loopback
  if (bytes[0] === 0xfe && (bytes[1]! & 0xc0) === 0x80) return true; // fe80::/10 link-local
  if (bytes.every((byte, index) => byte === AWS_METADATA_V6[index])) return true;
  return embeddedIpv4(bytes).some(forbiddenIpv4);
}

function forbiddenIpv4(address: string): boolean {
  const [a, b] = address.split('.').map(Number) as [number, number];
  if (a === 169 && b === 254) return true; // link-local, incl. 169.254.169.254 metadata
  if (a === 0) return true; // "this network": reaches the local host
  return address === '100.100.100.200'; // Alibaba Cloud metadata
}

/** The 16 bytes of a valid IPv6 literal (any spelling: `::`, leading zeros, a dotted IPv4 tail). */
function ipv6Bytes(literal: string): number[] {
  let text = literal.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const words = (part: string | undefined) =>
    part ? part.split(':').map((word) => Number.parseInt(word, 16)) : [];
  const [head, tail] = text.split('::');
  const before = words(head);
  const after = words(tail);
  const all = [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  return all.flatMap((word) => [word >> 8, word & 255]);
}

/**
 * Every IPv4 address the IPv6 address may stand for: IPv4-mapped (::ffff:0:0/96), SIIT
 * (::ffff:0:0:0/96), IPv4-compatible (::/96), the well-known NAT64 prefix 64:ff9b::/96, the local-use
 * NAT64 prefix 64:ff9b:1::/48 at each RFC 6052 position its prefix length (48 to 96) allows, and 6to4
 * (2002::/16). A local-use prefix's length is the operator's choice, so each position is a candidate.
 */
function embeddedIpv4(bytes: readonly number[]): string[] {
  const v4 = (...at: number[]) => at.map((index) => bytes[index]).join('.');
  const zeroUpTo = (end: number) => bytes.slice(0, end).every((byte) => byte === 0);
  const word = (index: number) => (bytes[index * 2]! << 8) | bytes[index * 2 + 1]!;
  const last = v4(12, 13, 14, 15);
  const found: string[] = [];
  if (zeroUpTo(10) && word(5) === 0xffff) found.push(last); // mapped
  if (zeroUpTo(8) && word(4) === 0xffff && word(5) === 0) found.push(last); // SIIT
  if (zeroUpTo(12)) found.push(last); // compatible (:: and ::1 are decided before)
  if (word(0) === 0x64 && word(1) === 0xff9b) {
    if (word(2) === 0 && bytes.slice(6, 12).every((byte) => byte === 0)) found.push(last);
    if (word(2) === 1) found.push(v4(6, 7, 9, 10), v4(7, 9, 10, 11), v4(9, 10, 11, 12), last);
  }
  if (word(0) === 0x2002) found.push(v4(2, 3, 4, 5)); // 6to4
  return found;
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
