/** Unique names for per-test isolation (PostgreSQL schemas, Redis key prefixes, temp folders). */
import { randomBytes } from 'node:crypto';

export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}
