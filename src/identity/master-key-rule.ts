/**
 * One rule for the master key, wherever it comes from (general_settings.master_key or
 * GATEWAY_MASTER_KEY): shorter than 16 characters is refused when the gateway listens beyond loopback,
 * and warned about on loopback, where LiteLLM's example `sk-1234` is a fine local default (issue 9/10).
 */
export const MIN_MASTER_KEY_LENGTH = 16;

export type MasterKeyVerdict = { kind: 'ok' } | { kind: 'warn' | 'refuse'; message: string };

export function judgeMasterKey(key: string, source: string, host: string): MasterKeyVerdict {
  if (key.length >= MIN_MASTER_KEY_LENGTH) return { kind: 'ok' };
  const short = `the master key from ${source} has ${key.length} characters; use at least ${MIN_MASTER_KEY_LENGTH} (e.g. \`openssl rand -base64 24\`)`;
  if (isLoopback(host))
    return { kind: 'warn', message: `${short}. Accepted because the gateway listens on loopback only.` };
  return {
    kind: 'refuse',
    message: `${short}: refused because the gateway listens on ${host}, beyond loopback.`,
  };
}

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}
