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
