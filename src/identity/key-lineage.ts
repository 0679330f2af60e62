/**
 * The people behind an API key, for four-eyes (issue 25: an admin approved its own MCP call with a key
 * it had minted for a peer, and through a chain of two keys). A key's lineage is its creator (`user:<id>`)
 * followed by the lineage of the key the creator used, so it follows the created_by chain transitively.
 * It is computed once, when the key is created, from the creating key's stored lineage: a key deleted
 * in the middle of a chain cannot break it, and a chain cannot form a cycle (a key's lineage only names
 * keys that existed before it). The master key is the operator's credential, not a person: it ends a chain.
 */
import type { StoredKeyLineage } from '../store/db/repositories/api-key-repository.ts';

/** At most this many people are kept; a longer chain is marked and nobody but the master key approves through it. */
export const MAX_LINEAGE = 32;
/** Marks a lineage cut at MAX_LINEAGE: everyone may be behind the key. */
export const LINEAGE_OVERFLOW = '*';

/** The lineage stored with a key, or for a key older than lineages its recorded creator alone. */
export function lineageOf(key: StoredKeyLineage): string[] {
  const stored = key.created_by_lineage;
  if (Array.isArray(stored) && stored.every((label) => typeof label === 'string')) return stored;
  return key.created_by?.startsWith('user:') ? [key.created_by] : [];
}

/**
 * The lineage of a key created by `actor` (`master` or `user:<id>`) with a key of lineage `parent`:
 * the actor first, then the parent's people, each once.
 */
export function childLineage(actor: string, parent: readonly string[]): string[] {
  if (actor === 'master') return [];
  const people = [...new Set([actor, ...parent])];
  if (people.length <= MAX_LINEAGE) return people;
  return [...people.slice(0, MAX_LINEAGE), LINEAGE_OVERFLOW];
}

/** Everyone who may hold or have derived a key: its owner and its lineage. */
export function peopleBehind(ownerUserId: string | null, lineage: readonly string[]): Set<string> {
  const people = new Set(lineage);
  if (ownerUserId !== null) people.add(`user:${ownerUserId}`);
  return people;
}
