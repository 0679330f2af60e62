/**
 * general_settings.trusted_proxies: the peers whose X-Forwarded-For names the client, as Fastify's
 * `trustProxy` list takes them (proxy-addr): IP addresses, CIDR ranges, and the names loopback,
 * linklocal and uniquelocal. LiteLLM has no such setting.
 */
import { isIP } from 'node:net';

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** Why `entry` is not a trusted-proxy entry, or undefined when it is one. */
export function trustedProxyProblem(entry: string): string | undefined {
  if (NAMED_RANGES.has(entry)) return undefined;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || address.includes('%') || rest.length > 0)
    return `${JSON.stringify(entry)} is not an IP address, a CIDR range (10.0.0.0/8, fd00::/8) or one of loopback, linklocal, uniquelocal`;
  const longest = family === 4 ? 32 : 128;
  if (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= longest))
    return `${JSON.stringify(entry)}: the prefix length must be a number from 0 to ${longest}`;
  return undefined;
}

/** Problems of a trusted_proxies list, each naming its entry's path. */
export function trustedProxiesProblems(entries: readonly string[], path: string): string[] {
  return entries.flatMap((entry, index) => {
    const problem = trustedProxyProblem(entry);
    return problem ? [`${path}[${index}]: ${problem}`] : [];
  });
}
