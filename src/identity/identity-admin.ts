/**
 * The identity admin use cases: organizations, teams, users and API keys. Every change is validated
 * completely before anything is written, written in one transaction together with the invalidation of
 * cached authentications it affects and the audit entry of the change (before and after, docs/audit.md),
 * and the invalidation is published after commit.
 */
import type { Kysely } from 'kysely';
import type { LimitFields } from '../canonical/caller.ts';
import type { Clock } from '../lib/clock.ts';
import { errors } from '../lib/error-catalogue.ts';
import { newId } from '../lib/random.ts';
import { type ApiKeyRecord, ApiKeyRepository } from '../store/db/repositories/api-key-repository.ts';
import type { Page, PageRequest } from '../store/db/repositories/limit-columns.ts';
import {
  type OrganizationRecord,
  OrganizationRepository,
} from '../store/db/repositories/organization-repository.ts';
import { type TeamRecord, TeamRepository } from '../store/db/repositories/team-repository.ts';
import { type UserRecord, UserRepository } from '../store/db/repositories/user-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import { type AuditChange, type AuditContext, appendAudit, organizationOfTarget } from './admin-audit.ts';
import type { KeyBody, OrganizationBody, TeamBody, UserBody } from './admin-schemas.ts';
import { displayPrefix, generateApiKeySecret, type KeyHasher } from './api-key-secret.ts';
import type { AuthInvalidationPublisher, InvalidationTarget } from './auth-invalidation.ts';
import {
  activatesOutputPolicy,
  idMismatch,
  notFound,
  requireKeyOwners,
  requireKeyRecipient,
  requireMembership,
  requireOrganization,
  userChanges,
  validLimits,
} from './identity-admin-checks.ts';
import { keyChanges } from './key-changes.ts';
import { childLineage, lineageOf } from './key-lineage.ts';

export interface IdentityAdminOptions {
  db: Kysely<DatabaseSchema>;
  publisher: AuthInvalidationPublisher;
  hashKey: KeyHasher;
  clock: Clock;
  /**
   * Throws when output-token policies cannot work under the current settings (the 409 naming the
   * setting); called before a write that would set one (spec output rule 10).
   */
  outputPolicyCheck?: () => Promise<void>;
}

type Transaction = Kysely<DatabaseSchema>;

/** What a change's work returns: its result and the audit entry to append in the same transaction. */
type Audited<T> = { result: T; audit: AuditChange };

export class IdentityAdmin {
  private readonly db: Kysely<DatabaseSchema>;
  private readonly publisher: AuthInvalidationPublisher;
  private readonly hashKey: KeyHasher;
  private readonly clock: Clock;
  private readonly outputPolicyCheck: (() => Promise<void>) | undefined;

  constructor(options: IdentityAdminOptions) {
    this.outputPolicyCheck = options.outputPolicyCheck;
    this.db = options.db;
    this.publisher = options.publisher;
    this.hashKey = options.hashKey;
    this.clock = options.clock;
  }

  // Organizations ---------------------------------------------------------------------------------

  /** POST upsert: creates the organization, or updates it when `organization_id` exists. */
  async upsertOrganization(
    body: OrganizationBody,
    context: AuditContext,
  ): Promise<{ record: OrganizationRecord; created: boolean }> {
    const changes = validLimits(body);
    await this.requireOutputSupport(changes);
    const id = body.organization_id ?? newId('org');
    return this.change([{ kind: 'organization', id }], context, async (trx) => {
      const repository = new OrganizationRepository(trx);
      const before = await repository.get(id);
      if (before) await repository.update(id, changes, this.clock.now());
      else await repository.insert(id, changes, this.clock.now());
      const record = (await repository.get(id))!;
      const audit = entry(before ? 'update' : 'create', 'organization', id, id, before, record);
      return { result: { record, created: !before }, audit };
    });
  }

  async updateOrganization(
    id: string,
    body: OrganizationBody,
    context: AuditContext,
  ): Promise<OrganizationRecord> {
    if (body.organization_id !== undefined && body.organization_id !== id)
      throw idMismatch('organization_id');
    const changes = validLimits(body);
    await this.requireOutputSupport(changes);
    return this.change([{ kind: 'organization', id }], context, async (trx) => {
      const repository = new OrganizationRepository(trx);
      const before = await repository.get(id);
      if (!before || !(await repository.update(id, changes, this.clock.now())))
        throw errors.notFound('organization', id);
      const record = (await repository.get(id))!;
      return { result: record, audit: entry('update', 'organization', id, id, before, record) };
    });
  }

  async getOrganization(id: string): Promise<OrganizationRecord> {
    return (await new OrganizationRepository(this.db).get(id)) ?? notFound('organization', id);
  }

  listOrganizations(
    page: PageRequest,
    organizationId?: string,
    search?: string,
  ): Promise<Page<OrganizationRecord>> {
    return new OrganizationRepository(this.db).list(page, organizationId, search);
  }

  async deleteOrganization(id: string, context: AuditContext): Promise<void> {
    await this.change([{ kind: 'organization', id }], context, async (trx) => {
      const repository = new OrganizationRepository(trx);
      const members = await repository.countMembers(id);
      if (members > 0) {
        throw errors.conflict(
          `Organization '${id}' still has ${members} team(s) or user(s); delete them or move them to another organization first.`,
        );
      }
      const before = await repository.get(id);
      if (!before || !(await repository.delete(id))) throw errors.notFound('organization', id);
      return { result: undefined, audit: entry('delete', 'organization', id, id, before, null) };
    });
  }

  // Teams -----------------------------------------------------------------------------------------

  async upsertTeam(body: TeamBody, context: AuditContext): Promise<{ record: TeamRecord; created: boolean }> {
    const changes = validLimits(body);
    await this.requireOutputSupport(changes);
    const id = body.team_id ?? newId('team');
    return this.change([{ kind: 'team', id }], context, async (trx) => {
      await requireOrganization(trx, body.organization_id);
      const repository = new TeamRepository(trx);
      const before = await repository.get(id);
      if (before) await repository.update(id, changes, this.clock.now());
      else await repository.insert(id, changes, this.clock.now());
      const record = (await repository.get(id))!;
      const audit = entry(before ? 'update' : 'create', 'team', id, record.organization_id, before, record);
      return { result: { record, created: !before }, audit };
    });
  }

  async updateTeam(id: string, body: TeamBody, context: AuditContext): Promise<TeamRecord> {
    if (body.team_id !== undefined && body.team_id !== id) throw idMismatch('team_id');
    const changes = validLimits(body);
    await this.requireOutputSupport(changes);
    return this.change([{ kind: 'team', id }], context, async (trx) => {
      await requireOrganization(trx, body.organization_id);
      const repository = new TeamRepository(trx);
      const before = await repository.get(id);
      if (!before || !(await repository.update(id, changes, this.clock.now())))
        throw errors.notFound('team', id);
      const record = (await repository.get(id))!;
      return { result: record, audit: entry('update', 'team', id, record.organization_id, before, record) };
    });
  }

  async getTeam(id: string): Promise<TeamRecord> {
    return (await new TeamRepository(this.db).get(id)) ?? notFound('team', id);
  }

  listTeams(page: PageRequest, organizationId?: string, search?: string): Promise<Page<TeamRecord>> {
    return new TeamRepository(this.db).list(page, organizationId, search);
  }

  /** Deletes the team and its keys; its users stay, without a team. */
  async deleteTeam(id: string, context: AuditContext): Promise<void> {
    await this.change([{ kind: 'team', id }], context, async (trx) => {
      const repository = new TeamRepository(trx);
      const before = await repository.get(id);
      if (!before || !(await repository.delete(id))) throw errors.notFound('team', id);
      return { result: undefined, audit: entry('delete', 'team', id, before.organization_id, before, null) };
    });
  }

  // Users -----------------------------------------------------------------------------------------

  async upsertUser(body: UserBody, context: AuditContext): Promise<{ record: UserRecord; created: boolean }> {
    const changes = userChanges(body);
    await this.requireOutputSupport(changes);
    const id = body.user_id ?? newId('user');
    return this.change([{ kind: 'user', id }], context, async (trx) => {
      await requireMembership(trx, body.team_id, body.organization_id);
      const repository = new UserRepository(trx);
      const before = await repository.get(id);
      if (before) await repository.update(id, changes, this.clock.now());
      else await repository.insert(id, changes, this.clock.now());
      const record = (await repository.get(id))!;
      const organization = await organizationOfTarget(trx, { kind: 'user', id });
      const audit = entry(before ? 'update' : 'create', 'user', id, organization, before, record);
      return { result: { record, created: !before }, audit };
    });
  }

  async updateUser(id: string, body: UserBody, context: AuditContext): Promise<UserRecord> {
    if (body.user_id !== undefined && body.user_id !== id) throw idMismatch('user_id');
    const changes = userChanges(body);
    await this.requireOutputSupport(changes);
    return this.change([{ kind: 'user', id }], context, async (trx) => {
      const repository = new UserRepository(trx);
      const before = await repository.get(id);
      if (!before) throw errors.notFound('user', id);
      // The team must lie in the organization after the change, whichever of the two the body names.
      await requireMembership(
        trx,
        body.team_id === undefined ? before.team_id : body.team_id,
        body.organization_id === undefined ? before.organization_id : body.organization_id,
      );
      if (!(await repository.update(id, changes, this.clock.now()))) throw errors.notFound('user', id);
      const record = (await repository.get(id))!;
      const organization = await organizationOfTarget(trx, { kind: 'user', id });
      return { result: record, audit: entry('update', 'user', id, organization, before, record) };
    });
  }

  async getUser(id: string): Promise<UserRecord> {
    return (await new UserRepository(this.db).get(id)) ?? notFound('user', id);
  }

  listUsers(
    page: PageRequest,
    filter: { teamId?: string | undefined; organizationId?: string | undefined; search?: string | undefined },
  ): Promise<Page<UserRecord>> {
    return new UserRepository(this.db).list(page, filter);
  }

  /** Deletes the user and every key that belongs to them. */
  async deleteUser(id: string, context: AuditContext): Promise<void> {
    await this.change([{ kind: 'user', id }], context, async (trx) => {
      const repository = new UserRepository(trx);
      const before = await repository.get(id);
      const organization = await organizationOfTarget(trx, { kind: 'user', id });
      if (!before || !(await repository.delete(id))) throw errors.notFound('user', id);
      return { result: undefined, audit: entry('delete', 'user', id, organization, before, null) };
    });
  }

  // API keys --------------------------------------------------------------------------------------

  /**
   * Creates a key and returns its secret, which is shown this once and never stored. The actor is
   * recorded as `created_by`, and with the lineage of the key it used as `created_by_lineage`, so that
   * nobody behind the key may approve its MCP calls (four-eyes, key-lineage.ts).
   */
  async createKey(body: KeyBody, context: AuditContext): Promise<{ key: string; record: ApiKeyRecord }> {
    const changes = keyChanges(body, this.clock.now());
    await this.requireOutputSupport(changes);
    const secret = generateApiKeySecret();
    const id = newId('key');
    const record = await this.db.transaction().execute(async (trx) => {
      await requireKeyOwners(trx, body.user_id, body.team_id);
      await requireKeyRecipient(trx, context.actor, body.user_id);
      const repository = new ApiKeyRepository(trx);
      const now = this.clock.now();
      const fields = { key_id: id, key_hash: this.hashKey(secret), key_prefix: displayPrefix(secret) };
      const lineage = await creatorLineage(repository, context);
      const creator = { created_by: context.actor, created_by_lineage: lineage };
      await repository.insert({ ...changes, ...fields, ...creator }, now);
      const record = (await repository.get(id))!;
      const organization = await organizationOfTarget(trx, { kind: 'key', id });
      await appendAudit(trx, context, entry('create', 'key', id, organization, null, record), now);
      return record;
    });
    return { key: secret, record };
  }

  async updateKey(id: string, body: KeyBody, context: AuditContext): Promise<ApiKeyRecord> {
    const changes = keyChanges(body, this.clock.now());
    await this.requireOutputSupport(changes);
    return this.change([{ kind: 'key', id }], context, async (trx) => {
      await requireKeyOwners(trx, body.user_id, body.team_id);
      const repository = new ApiKeyRepository(trx);
      const before = await repository.get(id);
      if (!before) throw errors.notFound('key', id);
      // Moving a key to another user hands it to them (its holders keep the secret).
      if (body.user_id !== before.user_id) await requireKeyRecipient(trx, context.actor, body.user_id);
      if (!(await repository.update(id, changes, this.clock.now()))) throw errors.notFound('key', id);
      const record = (await repository.get(id))!;
      const organization = await organizationOfTarget(trx, { kind: 'key', id });
      return { result: record, audit: entry('update', 'key', id, organization, before, record) };
    });
  }

  /**
   * Refuses, before anything is written, a key for `userId` that the actor may not mint (a key for
   * another administrator; see requireKeyRecipient): for a use case that creates the user and then its key.
   */
  async requireKeyRecipient(
    userId: string | undefined,
    role: UserBody['role'],
    context: AuditContext,
  ): Promise<void> {
    if (userId !== undefined) return requireKeyRecipient(this.db, context.actor, userId, role);
    // A user created without an id is a new person: a key for them is for another administrator
    // exactly when the request makes them one.
    if (context.actor !== 'master' && role !== undefined && role !== 'member')
      throw errors.keyForAnotherAdministrator(undefined);
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
    filter: {
      userId?: string | undefined;
      teamId?: string | undefined;
      organizationId?: string | undefined;
      search?: string | undefined;
    },
  ): Promise<Page<ApiKeyRecord>> {
    return new ApiKeyRepository(this.db).list(page, filter);
  }

  async deleteKey(id: string, context: AuditContext): Promise<void> {
    await this.change([{ kind: 'key', id }], context, async (trx) => {
      const repository = new ApiKeyRepository(trx);
      const before = await repository.get(id);
      const organization = await organizationOfTarget(trx, { kind: 'key', id });
      if (!before || !(await repository.delete(id))) throw errors.notFound('key', id);
      return { result: undefined, audit: entry('delete', 'key', id, organization, before, null) };
    });
  }

  /** A write that sets an output-token limit must meet the output-policy requirements. */
  private async requireOutputSupport(changes: Partial<LimitFields>): Promise<void> {
    if (this.outputPolicyCheck && activatesOutputPolicy(changes)) await this.outputPolicyCheck();
  }

  /**
   * Runs `work` in a transaction that also appends its audit entry and queues the invalidation;
   * publishes the invalidation after commit.
   */
  private async change<T>(
    targets: InvalidationTarget[],
    context: AuditContext,
    work: (trx: Transaction) => Promise<Audited<T>>,
  ): Promise<T> {
    const { result, queued } = await this.db.transaction().execute(async (trx) => {
      const { result, audit } = await work(trx);
      await appendAudit(trx, context, audit, this.clock.now());
      return { result, queued: await this.publisher.enqueue(trx, targets) };
    });
    await this.publisher.publish(queued);
    return result;
  }
}

/** The lineage of a key the actor creates now: the actor, then the lineage of the key it uses. */
async function creatorLineage(keys: ApiKeyRepository, context: AuditContext): Promise<string[]> {
  const actorKeyId = context.actorKeyId;
  const actorKey = actorKeyId ? (await keys.lineages([actorKeyId])).get(actorKeyId) : undefined;
  return childLineage(context.actor, actorKey ? lineageOf(actorKey) : []);
}

/** The audit entry of an identity change (`<type>.<verb>`). */
function entry(
  verb: 'create' | 'update' | 'delete',
  targetType: 'organization' | 'team' | 'user' | 'key',
  targetId: string,
  organizationId: string | null,
  before: object | null | undefined,
  after: object | null,
): AuditChange {
  return {
    action: `${targetType}.${verb}`,
    targetType,
    targetId,
    organizationId,
    before: before ?? null,
    after,
  };
}
