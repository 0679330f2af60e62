/**
 * Turns a bearer token into a Caller. Answers from an in-process cache (no database query on a hit);
 * a miss loads the key, its user, team and organization once, shared by concurrent requests. Entries
 * expire after the configured TTL and are dropped at once when an invalidation names the key or any
 * entity it belongs to, in this process or (through the shared store) in any other. Under
 * allow_requests_on_db_unavailable an expired entry is served stale while the database does not answer
 * (up to a maximum staleness), and a key not in the cache is refused with a retryable 503.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { scopeBudget } from '../canonical/budget-window.ts';
import type { Caller, LimitFields, ScopeKind, ScopePolicy } from '../canonical/caller.ts';
import type { Clock } from '../lib/clock.ts';
import { isDatabaseOutage } from '../lib/database-outage.ts';
import { errors } from '../lib/error-catalogue.ts';
import { type ApiKeyRecord, ApiKeyRepository } from '../store/db/repositories/api-key-repository.ts';
import { OrganizationRepository } from '../store/db/repositories/organization-repository.ts';
import { TeamRepository } from '../store/db/repositories/team-repository.ts';
import { UserRepository } from '../store/db/repositories/user-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';
import type { KeyHasher } from './api-key-secret.ts';
import {
  AUTH_INVALIDATION_CHANNEL,
  type InvalidationListener,
  type InvalidationTarget,
  parseInvalidation,
} from './auth-invalidation.ts';
import { limitsFromRecord } from './limit-record.ts';

const NEGATIVE_TTL_MS = 5_000;
const MAX_ENTRIES = 50_000;
/** While the database is down, how often a key's entry is loaded again (a probe for its return). */
const RETRY_WHILE_DOWN_MS = 1_000;
/** How long a request waits for a load before the database counts as not answering (the readiness deadline). */
const DEFAULT_DATABASE_WAIT_MS = 1_000;

type Status = 'ok' | 'blocked' | 'missing';

interface Entry {
  status: Status;
  caller: Caller | undefined;
  expiresAt: number;
}

/**
 * Who is calling the admin API: the master key, or an administrator through one of their keys: a
 * proxy administrator (everything) or an organization administrator (their organization only).
 */
export type AdminActor =
  | { kind: 'master' }
  | { kind: 'user'; userId: string; keyId: string; role: 'proxy_admin' }
  | { kind: 'user'; userId: string; keyId: string; role: 'org_admin'; organizationId: string };

/** How an admin actor is recorded (`decided_by`, `created_by`): `master` or `user:<user_id>`. */
export function actorLabel(actor: AdminActor): string {
  return actor.kind === 'master' ? 'master' : `user:${actor.userId}`;
}

export const masterCaller: Caller = Object.freeze({
  kind: 'master',
  keyId: null,
  keyName: null,
  userId: null,
  teamId: null,
  organizationId: null,
  userRole: 'proxy_admin',
  models: null,
  maxParallelRequests: null,
  cacheEnabled: null,
  scopes: [],
  expiresAt: null,
});

export interface AuthenticatorOptions {
  db: Kysely<DatabaseSchema>;
  hashKey: KeyHasher;
  masterKey: string;
  clock: Clock;
  ttlMs: number;
  /**
   * allow_requests_on_db_unavailable: an entry past its TTL is still served, up to `maxStaleMs` past
   * it, while the database does not answer within `waitMs` (default 1 s) or fails with an outage.
   */
  staleWhileUnavailable?: { maxStaleMs: number; waitMs?: number };
}

export class Authenticator implements InvalidationListener {
  private readonly options: AuthenticatorOptions;
  /** The master key's hash, so each request hashes its token once and compares in constant time. */
  private readonly masterHash: Buffer;
  private readonly entries = new Map<string, Entry>();
  /** Token → keyed hash for tokens of stored keys; the hash of a token never changes. */
  private readonly hashes = new Map<string, string>();
  private readonly loading = new Map<string, Promise<Entry>>();
  /** Bumped by every invalidation, so a load that raced with one is not cached. */
  private generation = 0;
  /** When a load last found the database down (stale-while-unavailable); undefined once one succeeds. */
  private downSince: number | undefined;

  constructor(options: AuthenticatorOptions) {
    this.options = options;
    this.masterHash = Buffer.from(options.hashKey(options.masterKey));
  }

  /** Listens for invalidations published by other processes. */
  async listen(store: SharedStore): Promise<void> {
    await store.subscribe(
      AUTH_INVALIDATION_CHANNEL,
      (message) => this.invalidate(parseInvalidation(message)),
      () => this.clear(),
    );
  }

  /** Resolves the caller for `Authorization` header value; throws a 401 GatewayError. */
  async authenticate(authorization: string | undefined): Promise<Caller> {
    const token = bearerToken(authorization);
    if (token === undefined) throw errors.missingApiKey();
    const hash = this.hashOf(token);
    if (hashesEqual(hash, this.masterHash)) return masterCaller;
    const now = this.options.clock.now();
    let entry = this.entries.get(hash);
    if (entry === undefined || entry.expiresAt <= now)
      entry = this.options.staleWhileUnavailable
        ? await this.loadOrStale(hash, entry, now, this.options.staleWhileUnavailable)
        : await this.load(hash);
    if (entry.status === 'missing') throw errors.invalidApiKey();
    this.rememberHash(token, hash);
    if (entry.status === 'blocked') throw errors.blockedApiKey();
    const caller = entry.caller!;
    if (caller.expiresAt !== null && caller.expiresAt <= now) throw errors.expiredApiKey();
    return caller;
  }

  /**
   * The caller of a stored key by its id, for work done later on the key's behalf (batch items): the
   * same Caller a request with the key's token gets, read fresh (no cache: a batch item must see a
   * revocation at once). Throws the same 401 GatewayErrors as `authenticate` for a deleted, blocked or
   * expired key.
   */
  async callerOfKey(keyId: string): Promise<Caller> {
    const { db, clock } = this.options;
    const key = await new ApiKeyRepository(db).get(keyId);
    if (!key) throw errors.invalidApiKey();
    if (key.blocked) throw errors.blockedApiKey();
    const caller = await callerOf(db, key);
    if (caller.expiresAt !== null && caller.expiresAt <= clock.now()) throw errors.expiredApiKey();
    return caller;
  }

  /** Admin API access: the master key, or the key of a proxy administrator or organization administrator. */
  async authenticateAdmin(authorization: string | undefined): Promise<AdminActor> {
    const caller = await this.authenticate(authorization);
    if (caller.kind === 'master') return { kind: 'master' };
    const { userId, keyId, userRole, organizationId } = caller;
    if (userId === null || keyId === null) throw errors.masterKeyRequired();
    if (userRole === 'proxy_admin') return { kind: 'user', userId, keyId, role: 'proxy_admin' };
    if (userRole === 'org_admin' && organizationId !== null)
      return { kind: 'user', userId, keyId, role: 'org_admin', organizationId };
    throw errors.masterKeyRequired();
  }

  /** The keyed hash of a token; tokens of known keys skip the HMAC (about 2-3% of a request's CPU). */
  private hashOf(token: string): string {
    return this.hashes.get(token) ?? this.options.hashKey(token);
  }

  /** Remembers the hash of a token that belongs to a stored key (never of unknown tokens). */
  private rememberHash(token: string, hash: string): void {
    if (this.hashes.has(token)) return;
    if (this.hashes.size >= MAX_ENTRIES) this.hashes.clear();
    this.hashes.set(token, hash);
  }

  invalidate(targets: readonly InvalidationTarget[]): void {
    if (targets.length === 0) return;
    this.generation++;
    for (const [hash, entry] of this.entries) {
      if (entry.status === 'missing') continue;
      const caller = entry.caller;
      if (!caller || targets.some((target) => matches(caller, target))) this.entries.delete(hash);
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /**
   * Stale-while-unavailable: a load that succeeds in time answers; one that fails with an outage, or
   * is still waiting after `waitMs`, leaves the database marked down, and the stale entry (if it is
   * within `maxStaleMs` of its expiry) answers instead, or a 503 when there is none. While down, a
   * request with a stale entry does not wait: one load per second probes for the database's return.
   */
  private async loadOrStale(
    hash: string,
    cached: Entry | undefined,
    now: number,
    rule: { maxStaleMs: number; waitMs?: number },
  ): Promise<Entry> {
    const stale = cached && cached.status !== 'missing' && now < cached.expiresAt + rule.maxStaleMs;
    // Known down, with something to serve: no waiting, and at most one load a second probes for the
    // database's return. With nothing to serve, the request waits (boundedly) for its own load.
    const serveAtOnce = stale && this.downSince !== undefined;
    if (serveAtOnce && now - this.downSince! < RETRY_WHILE_DOWN_MS && !this.loading.has(hash)) return cached;
    const loading = this.load(hash);
    loading.catch(() => {}); // it may finish after we stopped waiting
    const outcome = await settledWithin(loading, serveAtOnce ? 0 : (rule.waitMs ?? DEFAULT_DATABASE_WAIT_MS));
    if (outcome.state === 'done') return outcome.entry;
    if (outcome.state === 'failed' && !isDatabaseOutage(outcome.error)) throw outcome.error;
    this.downSince = this.options.clock.now();
    if (stale) return cached;
    throw errors.keyNotCheckable();
  }

  private load(hash: string): Promise<Entry> {
    let pending = this.loading.get(hash);
    if (!pending) {
      const generation = this.generation;
      pending = this.fetch(hash)
        .then((entry) => {
          this.downSince = undefined;
          if (generation === this.generation) this.remember(hash, entry);
          return entry;
        })
        .finally(() => this.loading.delete(hash));
      this.loading.set(hash, pending);
    }
    return pending;
  }

  private remember(hash: string, entry: Entry): void {
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(hash, entry);
  }

  private async fetch(hash: string): Promise<Entry> {
    const { db, clock, ttlMs } = this.options;
    const now = clock.now();
    const key = await new ApiKeyRepository(db).findByHash(hash);
    if (!key) return { status: 'missing', caller: undefined, expiresAt: now + NEGATIVE_TTL_MS };
    const caller = await callerOf(db, key);
    return { status: key.blocked ? 'blocked' : 'ok', caller, expiresAt: now + ttlMs };
  }
}

/** The Caller of a stored key: its user, team and organization loaded once, scopes in the spec's order. */
async function callerOf(db: Kysely<DatabaseSchema>, key: ApiKeyRecord): Promise<Caller> {
  const user = key.user_id ? await new UserRepository(db).get(key.user_id) : undefined;
  const teamId = key.team_id ?? user?.team_id ?? null;
  const team = teamId ? await new TeamRepository(db).get(teamId) : undefined;
  const organizationId = team?.organization_id ?? user?.organization_id ?? null;
  const organization = organizationId ? await new OrganizationRepository(db).get(organizationId) : undefined;
  const scopes: ScopePolicy[] = [];
  if (organization) scopes.push(scopePolicy('org', organization.organization_id, organization));
  if (team) scopes.push(scopePolicy('team', team.team_id, team));
  if (user) scopes.push(scopePolicy('user', user.user_id, user));
  scopes.push(scopePolicy('key', key.key_id, key));
  return Object.freeze({
    kind: 'api_key',
    keyId: key.key_id,
    keyName: key.key_name,
    userId: user?.user_id ?? null,
    teamId: team?.team_id ?? null,
    organizationId: organization?.organization_id ?? null,
    userRole: user?.role ?? null,
    models: key.models,
    maxParallelRequests: key.max_parallel_requests,
    cacheEnabled: key.cache_enabled ?? team?.cache_enabled ?? null,
    scopes,
    expiresAt: key.expires_at,
  });
}

/** A scope's limits and its budget (amounts and window precomputed, so admission does no parsing). */
function scopePolicy(kind: ScopeKind, id: string, record: LimitFields): ScopePolicy {
  return { kind, id, limits: limitsFromRecord(record), budget: scopeBudget(record) };
}

function matches(caller: Caller, target: InvalidationTarget): boolean {
  switch (target.kind) {
    case 'key':
      return caller.keyId === target.id;
    case 'user':
      return caller.userId === target.id;
    case 'team':
      return caller.teamId === target.id;
    case 'organization':
      return caller.organizationId === target.id;
    case 'tier_policies':
      return false; // cached callers do not carry tier policies (limits/tier-policies.ts does)
  }
}

type Settled = { state: 'done'; entry: Entry } | { state: 'failed'; error: unknown } | { state: 'waiting' };

/** The load's outcome if it settles within `ms` (0: only if already settled), else `waiting`. */
function settledWithin(loading: Promise<Entry>, ms: number): Promise<Settled> {
  let timer: NodeJS.Timeout | undefined;
  const waiting = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => resolve({ state: 'waiting' }), ms);
  });
  const settled = loading.then(
    (entry): Settled => ({ state: 'done', entry }),
    (error: unknown): Settled => ({ state: 'failed', error }),
  );
  return Promise.race([settled, waiting]).finally(() => clearTimeout(timer));
}

function hashesEqual(hash: string, expected: Buffer): boolean {
  const candidate = Buffer.from(hash);
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}

function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1];
}
