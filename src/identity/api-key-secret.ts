/**
 * API-key secrets: generated with 256 bits of entropy, shown once, stored only as an HMAC-SHA256 keyed
 * with the gateway's salt (general_settings.salt_key, or a random salt kept in the database).
 */
import { createHmac, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'sk-';

export function generateApiKeySecret(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The displayable start of a secret (`sk-AbCdEf…`), enough to recognise a key, useless to attack it. */
export function displayPrefix(secret: string): string {
  return `${secret.slice(0, API_KEY_PREFIX.length + 6)}…`;
}

export type KeyHasher = (secret: string) => string;

export function createKeyHasher(salt: string): KeyHasher {
  return (secret) => createHmac('sha256', salt).update(secret).digest('base64url');
}
