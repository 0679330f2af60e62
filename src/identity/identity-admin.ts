/**
 * The identity admin use cases: organizations, teams, users and API keys. Every change is validated
 * completely before anything is written, written in one transaction together with the invalidation of
 * cached authentications it affects, and the invalidation is published after commit.
 */
import type { Kysely } from 'kysely';
import type { LimitFields } from '../canonical/caller.ts';
import type { Clock } from '../lib/clock.ts';
import { errors } from '../lib/error-catalogue.ts';
import type { GatewayError } from '../lib/gateway-error.ts';
import { newId } from '../lib/random.ts';
import {
  type ApiKeyChanges,
  type ApiKeyRecord,
  ApiKeyRepository,
} from '../store/db/repositories/api-key-repository.ts';
import type { Page, PageRequest } from '../store/db/repositories/limit-columns.ts';
import {
  type OrganizationRecord,
  OrganizationRepository,
} from '../store/db/repositories/organization-repository.ts';
import { type TeamRecord, TeamRepository } from '../store/db/repositories/team-repository.ts';
import {
  type UserChanges,
  type UserRecord,
  UserRepository,
} from '../store/db/repositories/user-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { KeyBody, OrganizationBody, TeamBody, UserBody } from './admin-schemas.ts';
import { displayPrefix, generateApiKeySecret, type KeyHasher } from './api-key-secret.ts';
import type { AuthInvalidationPublisher, InvalidationTarget } from './auth-invalidation.ts';
import { checkBudgets, checkModelMaps, normalizeModelMaps } from './limit-fields.ts';

export interface IdentityAdminOptions {
  db: Kysely<DatabaseSchema>;
  publisher: AuthInvalidationPublisher;
  hashKey: KeyHasher;
  clock: Clock;
}

type Transaction = Kysely<DatabaseSchema>;

export class IdentityAdmin {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly publisher: AuthInvalidationPublisher;
  private readonly hashKey: KeyHasher;
  private readonly clock: Clock;

  constructor(options: IdentityAdminOptions) {
    this.db = options.db;
    this.publisher = options.publisher;
    this.hashKey = options.hashKey;
    this.clock = options.clock;
  }

  // Organizations ---------------------------------------------------------------------------------

  /** POST upsert: creates the organization, or updates it when `organization_id` exists. */
  async upsertOrganization(
    body: OrganizationBody,
  ): Promise<{ record: OrganizationRecord; created: boolean }> {
    const changes = validLimits(body);
    const id = body.organization_id ?? newId('org');
    return this.change([{ kind: 'organization', id }], async (trx) => {
      const repository = new OrganizationRepository(trx);
      const exists = (await repository.get(id)) !== undefined;
      if (exists) await repository.update(id, changes, this.clock.now());
      else await repository.insert(id, changes, this.clock.now());
      return { record: (await repository.get(id))!, created: !exists };
    });
  }

  async updateOrganization(id: string, body: OrganizationBody): Promise<OrganizationRecord> {
    if (body.organization_id !== undefined && body.organization_id !== id)
      throw idMismatch('organization_id');
    const changes = validLimits(body);
    return this.change([{ kind: 'organization', id }], async (trx) => {
      const repository = new OrganizationRepository(trx);
      if (!(await repository.update(id, changes, this.clock.now())))
        throw errors.notFound('organization', id);
      return (await repository.get(id))!;
    });
  }

  async getOrganization(id: string): Promise<OrganizationRecord> {
    return (await new OrganizationRepository(this.db).get(id)) ?? notFound('organization', id);
  }

  listOrganizations(page: PageRequest, organizationId?: string): Promise<Page<OrganizationRecord>> {
    return new OrganizationRepository(this.db).list(page, organizationId);
  }

  async deleteOrganization(id: string): Promise<void> {
    await this.change([{ kind: 'organization', id }], async (trx) => {
      const repository = new OrganizationRepository(trx);
      const members = await repository.countMembers(id);
      if (members > 0) {
        throw errors.conflict(
          `Organization '${id}' still has ${members} team(s) or user(s); delete them or move them to another organization first.`,
        );
      }
      if (!(await repository.delete(id))) throw errors.notFound('organization', id);
    });
  }

  // Teams -----------------------------------------------------------------------------------------

  async upsertTeam(body: TeamBody): Promise<{ record: TeamRecord; created: boolean }> {
    const changes = validLimits(body);
    const id = body.team_id ?? newId('team');
    return this.change([{ kind: 'team', id }], async (trx) => {
      await requireOrganization(trx, body.organization_id);
      const repository = new TeamRepository(trx);
      const exists = (await repository.get(id)) !== undefined;
      if (exists) await repository.update(id, changes, this.clock.now());
      else await repository.insert(id, changes, this.clock.now());
      return { record: (await repository.get(id))!, created: !exists };
    });
  }

  async updateTeam(id: string, body: TeamBody): Promise<TeamRecord> {
    if (body.team_id !== undefined && body.team_id !== id) throw idMismatch('team_id');
    const changes = validLimits(body);
    return this.change([{ kind: 'team', id }], async (trx) => {
      await requireOrganization(trx, body.organization_id);
      const repository = new TeamRepository(trx);
      if (!(await repository.update(id, changes, this.clock.now()))) throw errors.notFound('team', id);
      return (await repository.get(id))!;
    });
  }

  async getTeam(id: string): Promise<TeamRecord> {
    return (await new TeamRepository(this.db).get(id)) ?? notFound('team', id);
  }

  listTeams(page: PageRequest, organizationId?: string): Promise<Page<TeamRecord>> {
    return new TeamRepository(this.db).list(page, organizationId);
  }

  /** Deletes the team and its keys; its users stay, without a team. */
  async deleteTeam(id: string): Promise<void> {
    await this.change([{ kind: 'team', id }], async (trx) => {
      if (!(await new TeamRepository(trx).delete(id))) throw errors.notFound('team', id);
    });
  }

  // Users -----------------------------------------------------------------------------------------

  async upsertUser(body: UserBody): Promise<{ record: UserRecord; created: boolean }> {
    const changes = userChanges(body);
    const id = body.user_id ?? newId('user');
    return this.change([{ kind: 'user', id }], async (trx) => {
      await requireMembership(trx, body.team_id, body.organization_id);
      const repository = new UserRepository(trx);
      const exists = (await repository.get(id)) !== undefined;
      if (exists) await repository.update(id, changes, this.clock.now());
      else await repository.insert(id, changes, this.clock.now());
      return { record: (await repository.get(id))!, created: !exists };
    });
  }

  async updateUser(id: string, body: UserBody): Promise<UserRecord> {
    if (body.user_id !== undefined && body.user_id !== id) throw idMismatch('user_id');
    const changes = userChanges(body);
    return this.change([{ kind: 'user', id }], async (trx) => {
      await requireMembership(trx, body.team_id, body.organization_id);
      const repository = new UserRepository(trx);
      if (!(await repository.update(id, changes, this.clock.now()))) throw errors.notFound('user', id);
      return (await repository.get(id))!;
    });
  }

  async getUser(id: string): Promise<UserRecord> {
    return (await new UserRepository(this.db).get(id)) ?? notFound('user', id);
  }

  listUsers(
    page: PageRequest,
    filter: { teamId?: string; organizationId?: string },
  ): Promise<Page<UserRecord>> {
    return new UserRepository(this.db).list(page, filter);
  }

  /** Deletes the user and every key that belongs to them. */
  async deleteUser(id: string): Promise<void> {
    await this.change([{ kind: 'user', id }], async (trx) => {
      if (!(await new UserRepository(trx).delete(id))) throw errors.notFound('user', id);
    });
  }

  // API keys --------------------------------------------------------------------------------------

  /** Creates a key and returns its secret, which is shown this once and never stored. */
  /** `createdBy` is recorded so that the creator may not approve the key's MCP calls (four-eyes). */
  async createKey(body: KeyBody, createdBy: string): Promise<{ key: string; record: ApiKeyRecord }> {
    const changes = this.keyChanges(body);
    const secret = generateApiKeySecret();
    const id = newId('key');
    const record = await this.db.transaction().execute(async (trx) => {
      await requireKeyOwners(trx, body.user_id, body.team_id);
      const repository = new ApiKeyRepository(trx);
      await repository.insert(
        {
          ...changes,
          key_id: id,
          key_hash: this.hashKey(secret),
          key_prefix: displayPrefix(secret),
          created_by: createdBy,
        },
        this.clock.now(),
      );
      return (await repository.get(id))!;
    });
    return { key: secret, record };
  }

  async updateKey(id: string, body: KeyBody): Promise<ApiKeyRecord> {
    const changes = this.keyChanges(body);
    return this.change([{ kind: 'key', id }], async (trx) => {
      await requireKeyOwners(trx, body.user_id, body.team_id);
      const repository = new ApiKeyRepository(trx);
      if (!(await repository.update(id, changes, this.clock.now()))) throw errors.notFound('key', id);
      return (await repository.get(id))!;
    });
  }

  /** The key whose secret this is (LiteLLM's management API names keys by their secret). */
  async getKeyBySecret(secret: string): Promise<ApiKeyRecord> {
    const key = await new ApiKeyRepository(this.db).findByHash(this.hashKey(secret));
    if (!key) throw errors.notFound('API key', `${secret.slice(0, 6)}…`);
    return key;
  }

  async getKey(id: string): Promise<ApiKeyRecord> {
    return (await new ApiKeyRepository(this.db).get(id)) ?? notFound('key', id);
  }

  listKeys(
    page: PageRequest,
    filter: { userId?: string | undefined; teamId?: string | undefined; organizationId?: string | undefined },
  ): Promise<Page<ApiKeyRecord>> {
    return new ApiKeyRepository(this.db).list(page, filter);
  }

  async deleteKey(id: string): Promise<void> {
    await this.change([{ kind: 'key', id }], async (trx) => {
      if (!(await new ApiKeyRepository(trx).delete(id))) throw errors.notFound('key', id);
    });
  }

  private keyChanges(body: KeyBody): ApiKeyChanges {
    const { duration, expires_at, ...rest } = body;
    if (duration !== undefined && expires_at !== undefined) {
      throw errors.invalidRequest('Send either duration or expires_at, not both.', 'duration');
    }
    const changes: ApiKeyChanges = validLimits(rest);
    if (duration !== undefined) {
      const milliseconds = durationMs(duration);
      if (!(milliseconds <= MAX_KEY_LIFETIME_MS))
        throw errors.invalidRequest('duration: must be at most 100 years (36500d).', 'duration');
      changes.expires_at = this.clock.now() + milliseconds;
    }
    if (expires_at !== undefined) changes.expires_at = expires_at === null ? null : this.expiry(expires_at);
    return changes;
  }

  /** A valid instant no later than 100 years ahead (a leap second such as 23:59:60 does not parse). */
  private expiry(text: string): number {
    const at = Date.parse(text);
    if (!Number.isFinite(at) || at < 0 || at > this.clock.now() + MAX_KEY_LIFETIME_MS) {
      throw errors.invalidRequest(
        'expires_at: must be a real date-time between 1970 and 100 years from now (e.g. 2027-01-31T00:00:00Z).',
        'expires_at',
      );
    }
    return at;
  }

  /** Runs `work` in a transaction that also queues the invalidation; publishes it after commit. */
  private async change<T>(targets: InvalidationTarget[], work: (trx: Transaction) => Promise<T>): Promise<T> {
    const { result, queued } = await this.db.transaction().execute(async (trx) => {
      const result = await work(trx);
      return { result, queued: await this.publisher.enqueue(trx, targets) };
    });
    await this.publisher.publish(queued);
    return result;
  }
}

/** A user body with `admin`, the earlier name of the proxy administrator role, stored as proxy_admin. */
function userChanges(body: UserBody): UserChanges {
  const { role, ...rest } = validLimits(body);
  return role === undefined ? rest : { ...rest, role: role === 'admin' ? 'proxy_admin' : role };
}

function validLimits<T extends Partial<LimitFields>>(body: T): T {
  const problem: GatewayError | undefined = checkModelMaps(body) ?? checkBudgets(body);
  if (problem) throw problem;
  return normalizeModelMaps(body);
}

async function requireOrganization(
  trx: Transaction,
  organizationId: string | null | undefined,
): Promise<void> {
  if (!organizationId) return;
  if (!(await new OrganizationRepository(trx).get(organizationId)))
    throw missingReference('organization_id', 'organization', organizationId);
}

async function requireMembership(
  trx: Transaction,
  teamId: string | null | undefined,
  organizationId: string | null | undefined,
): Promise<void> {
  await requireOrganization(trx, organizationId);
  if (!teamId) return;
  const team = await new TeamRepository(trx).get(teamId);
  if (!team) throw missingReference('team_id', 'team', teamId);
  if (organizationId && team.organization_id && team.organization_id !== organizationId) {
    throw errors.invalidRequest(
      `team_id: team '${teamId}' belongs to organization '${team.organization_id}', not '${organizationId}'.`,
      'team_id',
    );
  }
}

async function requireKeyOwners(
  trx: Transaction,
  userId: string | null | undefined,
  teamId: string | null | undefined,
): Promise<void> {
  if (userId && !(await new UserRepository(trx).get(userId)))
    throw missingReference('user_id', 'user', userId);
  if (teamId && !(await new TeamRepository(trx).get(teamId)))
    throw missingReference('team_id', 'team', teamId);
}

function missingReference(field: string, resource: string, id: string): GatewayError {
  return errors.invalidRequest(`${field}: no ${resource} with id '${id}' exists; create it first.`, field);
}

function idMismatch(field: string): GatewayError {
  return errors.invalidRequest(
    `${field} in the body must match the id in the path (ids cannot be changed).`,
    field,
  );
}

function notFound(resource: string, id: string): never {
  throw errors.notFound(resource, id);
}

const unitMs = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The longest a key may be made to live: beyond it, dates stop being dates (issue 9). */
const MAX_KEY_LIFETIME_MS = 36_500 * unitMs.d;

function durationMs(duration: string): number {
  const unit = duration.at(-1) as keyof typeof unitMs;
  return Number(duration.slice(0, -1)) * unitMs[unit];
}
