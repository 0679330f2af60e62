/**
 * Seals secrets stored in the database (upstream MCP bearer tokens) with AES-256-GCM, so a database dump
 * alone does not reveal them. The key is derived from the gateway's salt (set `general_settings.salt_key`
 * to keep it outside the database).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export interface SecretBox {
  seal(plaintext: string): string;
  /** Throws when the sealed text was not made with this key or was altered. */
  open(sealed: string): string;
}

export function createSecretBox(salt: string): SecretBox {
  const key = createHash('sha256').update(`switchboard-secret-box:${salt}`).digest();
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, iv.toString('base64url'), tag.toString('base64url'), body.toString('base64url')].join(
        ':',
      );
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split(':');
      if (version !== VERSION || !iv || !tag || body === undefined)
        throw new Error('unknown sealed secret format');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    },
  };
}
