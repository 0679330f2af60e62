/**
 * The settings output-token policies need (spec output rule 10, Authentication 4): the shared Redis
 * store, `redis_degraded_mode: fail_closed` (no per-process fallback), a standalone primary (no
 * cluster) with `maxmemory-policy noeviction`, and stored API-key authentication (the only mode this
 * gateway has, so always met). Start-up refuses stored policies under settings that break them; admin
 * writes that would create one are refused with a 409 naming the setting.
 */
import { type Kysely, sql } from 'kysely';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../config/config-error.ts';
import { ErrorType } from '../lib/error-catalogue.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import type { Logger } from '../observability/logger.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import { type RedisServerFacts, readRedisServerFacts } from '../store/shared/redis-output-requirements.ts';
import { RedisSharedStore } from '../store/shared/redis-shared-store.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';
import type { TierPolicySource } from './tier-policies.ts';

export interface RequirementProblem {
  /** The setting to change: `general_settings.redis_degraded_mode`, Redis `maxmemory-policy` … */
  setting: string;
  message: string;
}

export interface OutputRequirementsOptions {
  storeKind: 'redis' | 'memory';
  degradedMode: 'fail_open' | 'fail_closed';
  /** Reads the Redis server's facts (absent for the memory store); rejects when Redis does not answer. */
  readFacts?: () => Promise<RedisServerFacts>;
}

export class OutputRequirements {
  private readonly options: OutputRequirementsOptions;

  constructor(options: OutputRequirementsOptions) {
    this.options = options;
  }

  /** Every unmet requirement; `unverified` when Redis did not answer (its facts are unknown). */
  async problems(): Promise<{ problems: RequirementProblem[]; unverified: boolean }> {
    const { storeKind, degradedMode, readFacts } = this.options;
    const problems: RequirementProblem[] = [];
    if (storeKind !== 'redis' || !readFacts) {
      problems.push({
        setting: 'general_settings.redis_url',
        message:
          'output-token limits need the shared Redis store: set general_settings.redis_url (the in-memory store keeps no shared counters)',
      });
    }
    if (degradedMode !== 'fail_closed') {
      problems.push({
        setting: 'general_settings.redis_degraded_mode',
        message:
          'output-token limits need general_settings.redis_degraded_mode: fail_closed (fail_open would count on per-process counters while Redis is down)',
      });
    }
    if (!readFacts) return { problems, unverified: false };
    let facts: RedisServerFacts;
    try {
      facts = await readFacts();
    } catch {
      return { problems, unverified: true };
    }
    if (facts.cluster) {
      problems.push({
        setting: 'general_settings.redis_url',
        message:
          'output-token limits do not support Redis cluster mode: point redis_url at a standalone primary',
      });
    }
    if (facts.role !== undefined && facts.role !== 'master') {
      problems.push({
        setting: 'general_settings.redis_url',
        message: `redis_url points at a Redis ${facts.role}: output-token limits need the standalone primary`,
      });
    }
    if (facts.maxmemoryPolicy !== 'noeviction') {
      problems.push({
        setting: 'maxmemory-policy',
        message: `output-token limits need the Redis setting maxmemory-policy noeviction (it is ${facts.maxmemoryPolicy ?? 'unreadable: neither CONFIG GET nor INFO reports it'}); an evicting Redis can drop recorded usage`,
      });
    }
    return { problems, unverified: false };
  }

  /** Throws the 409 of an admin write that would create an output policy under unmet requirements. */
  async assertMet(): Promise<void> {
    const { problems, unverified } = await this.problems();
    const first = problems[0];
    if (first) {
      throw new GatewayError({
        status: 409,
        type: ErrorType.conflict,
        code: 'output_policy_requirements_unmet',
        param: first.setting,
        message: `Output-token policies cannot be enabled: ${problems.map((problem) => problem.message).join('; ')}.`,
      });
    }
    if (unverified) {
      throw new GatewayError({
        status: 503,
        type: ErrorType.unavailable,
        code: 'shared_store_unavailable',
        message:
          'Output-token policies cannot be enabled now: the shared Redis store did not answer, so its settings (maxmemory-policy, cluster mode) cannot be checked. Retry shortly.',
        retryAfter: 1,
      });
    }
  }
}

/** How many stored rows carry an output policy, per table (organizations, teams, users, keys). */
export async function countOutputPolicies(db: Kysely<DatabaseSchema>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['organizations', 'teams', 'users', 'api_keys'] as const) {
    const row = await db
      .selectFrom(table)
      .select(sql<number>`count(*)`.as('count'))
      .where((where) =>
        where.or([
          where('output_tpm_limit', 'is not', null),
          where('model_output_tpm_limit', 'is not', null),
        ]),
      )
      .executeTakeFirst();
    const count = Number(row?.count ?? 0);
    if (count > 0) counts[table] = count;
  }
  return counts;
}

/**
 * Start-up (spec rule 10): refuses to start when output policies are active (stored limits, or tier
 * policies while they enforce) and a requirement is unmet, naming each setting. When Redis does not
 * answer the check is logged as skipped: governed requests get 503 output_tpm_unavailable meanwhile.
 */
export async function refuseUnsupportedOutputPolicies(options: {
  requirements: OutputRequirements;
  db: Kysely<DatabaseSchema>;
  tiers: TierPolicySource | undefined;
  logger: Logger;
  source: string;
}): Promise<void> {
  const active = await countOutputPolicies(options.db);
  if (options.tiers?.enforcing && options.tiers.hasPolicies) active.tier_policies = 1;
  if (Object.keys(active).length === 0) return;
  const { problems, unverified } = await options.requirements.problems();
  if (problems.length > 0) {
    const where = Object.keys(active).join(', ');
    throw new ConfigError(
      options.source,
      problems.map(
        (problem) => `${problem.setting}: ${problem.message} (output policies are stored in ${where})`,
      ),
    );
  }
  if (unverified)
    options.logger.warn(
      'output policies are stored but Redis did not answer at start: its maxmemory-policy and cluster mode were not checked',
    );
}

/**
 * Output-token governance at start (spec output rules 10, 12): refuses stored output policies under
 * settings that break them (naming each setting), and creates the store epoch marker when it is
 * absent (paused until the next minute, see redis-output-scripts.ts), so a store that lost it, or
 * never had it, cannot be vouched for by a replica that just started.
 */
export async function startOutputGovernance(options: {
  config: Pick<Config, 'general_settings' | 'source'>;
  db: Kysely<DatabaseSchema>;
  store: SharedStore;
  tierPolicies: TierPolicySource;
  logger: Logger;
}): Promise<OutputRequirements> {
  const { config, store, logger } = options;
  const requirements = new OutputRequirements({
    storeKind: store.kind,
    degradedMode: config.general_settings.redis_degraded_mode,
    ...(store instanceof RedisSharedStore
      ? { readFacts: () => readRedisServerFacts(store.client, 2_000) }
      : {}),
  });
  await refuseUnsupportedOutputPolicies({
    requirements,
    db: options.db,
    tiers: options.tierPolicies,
    logger,
    source: config.source,
  });
  if (store.kind === 'redis') {
    await store.ensureOutputEpoch().catch((error: unknown) => {
      logger.warn({ err: error }, 'the output-token epoch marker could not be checked at start');
    });
  }
  return requirements;
}
