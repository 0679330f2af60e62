/**
 * The layout of response-cache keys, `rc:7:<team or ->:<scope tag>:<model>:<hash>`, and of the glob
 * patterns that purge them (SharedStore.cacheDelete). Writers and the purge share it, so they agree.
 */

/**
 * Cache version 7 (spec, versioning rule 3): bumping it orphans every older entry. 7 hashes every
 * request field but the unkeyed ones (6 hashed ten named fields and the model).
 */
export const RESPONSE_CACHE_VERSION = 7;
const ROOT = `rc:${RESPONSE_CACHE_VERSION}:`;
/** The team segment of entries cached without a team. */
const NO_TEAM = '-';

export interface ResponseCacheKeyParts {
  /** The caller's team, or null. */
  team: string | null;
  /** Who may read the entry: a tag for the team, the key, or everyone (cache_scope). */
  scopeTag: string;
  /** The public model the caller asked for, or the fallback group that answered. */
  model: string;
  /** SHA-256 hex of the versioned key fields. */
  hash: string;
}

/** What a purge selects; an absent field matches every value. */
export interface ResponseCacheFilter {
  team?: string | undefined;
  model?: string | undefined;
}

export function responseCacheKey(parts: ResponseCacheKeyParts): string {
  return `${ROOT}${teamSegment(parts.team)}:${segment(parts.scopeTag)}:${segment(parts.model)}:${segment(parts.hash)}`;
}

/** The `*` glob that matches the keys of `filter`: all, one team's, one model's, or both. */
export function responseCachePattern(filter: ResponseCacheFilter): string {
  const team = filter.team === undefined ? '*' : teamSegment(filter.team);
  if (filter.model === undefined) return filter.team === undefined ? `${ROOT}*` : `${ROOT}${team}:*`;
  return `${ROOT}${team}:*:${segment(filter.model)}:*`;
}

/**
 * URI-encodes a segment, `*` included: no segment then holds `:` (team ids and model names may) or a
 * glob wildcard, so a pattern's `*` can only span whole segments and never selects another team's keys.
 */
function segment(text: string): string {
  return encodeURIComponent(text).replaceAll('*', '%2A');
}

/** A team literally named `-` is told apart from "no team". */
function teamSegment(team: string | null): string {
  if (team === null) return NO_TEAM;
  return team === NO_TEAM ? '%2D' : segment(team);
}
