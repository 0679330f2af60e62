/** Randomness comes through this interface so strategies and ids can be made deterministic in tests. */
import { randomBytes } from 'node:crypto';

export interface Random {
  /** A float in [0, 1). */
  next(): number;
}

export const systemRandom: Random = { next: () => Math.random() };

/** A URL-safe random id with a readable prefix, e.g. `key_3hF9…`. 96 bits of entropy. */
export function newId(prefix: string, separator = '_'): string {
  return `${prefix}${separator}${randomBytes(12).toString('base64url')}`;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `<prefix><length random base62 characters>` (no separator), e.g. OpenAI-style `file-…`, `batch_…`. */
export function newBase62Id(prefix: string, length = 24): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: rejecting the rest keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return prefix + out;
}
