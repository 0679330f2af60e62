/** Persistence of tier policies: one output-token limit per organization and exact caller-facing model. */
import type { Kysely } from 'kysely';
import type { DatabaseSchema, TierPoliciesTable } from '../tables.ts';
import type { Page, PageRequest } from './limit-columns.ts';

export interface TierPolicyRecord {
  tier_policy_id: string;
  organization_id: string;
  model: string;
  output_tpm_limit: number;
  created_at: number;
  updated_at: number;
}

export interface TierPolicyFilter {
  organizationId?: string | undefined;
  model?: string | undefined;
}

export class TierPolicyRepository {
  private readonly db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.db = db;
  }

  async get(tierPolicyId: string): Promise<TierPolicyRecord | undefined> {
    const row = await this.db
      .selectFrom('tier_policies')
      .selectAll()
      .where('tier_policy_id', '=', tierPolicyId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async find(organizationId: string, model: string): Promise<TierPolicyRecord | undefined> {
    const row = await this.db
      .selectFrom('tier_policies')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('model', '=', model)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(page: PageRequest, filter: TierPolicyFilter = {}): Promise<Page<TierPolicyRecord>> {
    let query = this.db.selectFrom('tier_policies');
    if (filter.organizationId !== undefined)
      query = query.where('organization_id', '=', filter.organizationId);
    if (filter.model !== undefined) query = query.where('model', '=', filter.model);
    const [rows, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at')
        .orderBy('tier_policy_id')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toRecord), total: Number(count.total) };
  }

  /** Every policy, for the in-memory view admission reads (one row per organization and model). */
  async listAll(): Promise<TierPolicyRecord[]> {
    const rows = await this.db.selectFrom('tier_policies').selectAll().execute();
    return rows.map(toRecord);
  }

  async insert(policy: Omit<TierPolicyRecord, 'created_at' | 'updated_at'>, now: number): Promise<void> {
    await this.db
      .insertInto('tier_policies')
      .values({ ...policy, created_at: now, updated_at: now })
      .execute();
  }

  async updateLimit(tierPolicyId: string, outputTpmLimit: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('tier_policies')
      .set({ output_tpm_limit: outputTpmLimit, updated_at: now })
      .where('tier_policy_id', '=', tierPolicyId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(tierPolicyId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('tier_policies')
      .where('tier_policy_id', '=', tierPolicyId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function toRecord(row: TierPoliciesTable): TierPolicyRecord {
  return {
    tier_policy_id: row.tier_policy_id,
    organization_id: row.organization_id,
    model: row.model,
    output_tpm_limit: Number(row.output_tpm_limit),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
