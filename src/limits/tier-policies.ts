/**
 * Tier policies (spec: Limits > Output tokens per minute, rule 8): output limits per organization and
 * exact caller-facing model, stored in the database. Admission reads them synchronously from this
 * in-memory view, loaded at start and reloaded whenever an invalidation names tier policies (in this
 * process at once, in other replicas through the shared store), so a change applies everywhere within
 * a second. The tier modes are read once at start: they never change while the process runs.
 */

import type { Kysely } from 'kysely';
import type { GeneralSettings } from '../config/config.ts';
import type {
  TierMissingServiceModeValue as TierMissingServiceMode,
  TierModes,
  TierPolicyModeValue as TierPolicyMode,
} from '../config/tier-modes.ts';
import type { Logger } from '../observability/logger.ts';
import { TierPolicyRepository } from '../store/db/repositories/tier-policy-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';

export type { TierMissingServiceMode, TierPolicyMode };

/** What admission needs to know about tier policies; synchronous, no I/O. */
export interface TierPolicySource {
  /**
   * The stored output limit for this organization and exact caller-facing model, or undefined. Answers
   * in every mode; callers apply it only while `enforcing`.
   */
  outputLimit(organizationId: string, model: string): number | undefined;
  /** True only with `tier_policy_mode: enforce` and `tier_policy_missing_service_mode: fail_closed`. */
  readonly enforcing: boolean;
  /** True while at least one tier policy is stored. A tier policy is active when `enforcing && hasPolicies`. */
  readonly hasPolicies: boolean;
}

/** One stored policy as the view needs it. */
export interface TierPolicyLimit {
  organizationId: string;
  model: string;
  outputTpmLimit: number;
}

/** An invalidation target as published on the shared channel (structurally identity's InvalidationTarget). */
export interface TierInvalidationTarget {
  kind: string;
}

/** The invalidation kind that makes every replica reload its tier policies. */
export const TIER_POLICY_INVALIDATION = 'tier_policies';

export interface TierPoliciesOptions {
  mode: TierPolicyMode;
  missingServiceMode: TierMissingServiceMode;
  /** Reads every stored policy (the table is small: one row per organization and model). */
  load: () => Promise<readonly TierPolicyLimit[]>;
  /** Called when a reload fails; the previous view stays in force until the next one succeeds. */
  onError?: (error: unknown) => void;
}

export class TierPolicies implements TierPolicySource {
  readonly mode: TierPolicyMode;
  readonly missingServiceMode: TierMissingServiceMode;
  readonly enforcing: boolean;
  private readonly load: () => Promise<readonly TierPolicyLimit[]>;
  private readonly onError: (error: unknown) => void;
  /** organization id → (model → limit). */
  private limits = new Map<string, Map<string, number>>();
  private count = 0;
  /** The reload in flight, and whether another must follow it (a change arrived while it read). */
  private reloading: Promise<void> | undefined;
  private again = false;

  constructor(options: TierPoliciesOptions) {
    this.mode = options.mode;
    this.missingServiceMode = options.missingServiceMode;
    this.enforcing = options.mode === 'enforce' && options.missingServiceMode === 'fail_closed';
    this.load = options.load;
    this.onError = options.onError ?? (() => {});
  }

  get hasPolicies(): boolean {
    return this.count > 0;
  }

  /** Number of stored policies in the current view. */
  get size(): number {
    return this.count;
  }

  outputLimit(organizationId: string, model: string): number | undefined {
    return this.limits.get(organizationId)?.get(model);
  }

  /** The first load, at start; a failure here is thrown (the gateway cannot know its policies). */
  async start(): Promise<void> {
    this.replace(await this.load());
  }

  /**
   * Invalidation listener: reloads when a target names tier policies, or an organization (deleting
   * one deletes its policies).
   */
  invalidate(targets: readonly TierInvalidationTarget[]): void {
    if (targets.some((target) => target.kind === TIER_POLICY_INVALIDATION || target.kind === 'organization'))
      void this.refresh();
  }

  /**
   * Reloads the view. Concurrent calls share one read, and a call arriving during a read schedules
   * one more, so the view never ends older than the last change announced. Never rejects.
   */
  refresh(): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.again = false;
        try {
          this.replace(await this.load());
        } catch (error) {
          this.onError(error);
        }
      } while (this.again);
      this.reloading = undefined;
    })();
    return this.reloading;
  }

  private replace(rows: readonly TierPolicyLimit[]): void {
    const limits = new Map<string, Map<string, number>>();
    for (const row of rows) {
      let models = limits.get(row.organizationId);
      if (!models) {
        models = new Map();
        limits.set(row.organizationId, models);
      }
      models.set(row.model, row.outputTpmLimit);
    }
    this.limits = limits;
    this.count = rows.length;
  }
}

/** The gateway's view, loaded from the database before it serves; its modes are those read at start. */
export async function startTierPolicies(options: {
  db: Kysely<DatabaseSchema>;
  general: Pick<GeneralSettings, 'tier_policy_mode' | 'tier_policy_missing_service_mode'>;
  sources: TierModes['sources'];
  logger: Logger;
}): Promise<TierPolicies> {
  const { general, logger } = options;
  const repository = new TierPolicyRepository(options.db);
  const tierPolicies = new TierPolicies({
    mode: general.tier_policy_mode,
    missingServiceMode: general.tier_policy_missing_service_mode,
    load: async () =>
      (await repository.listAll()).map((row) => ({
        organizationId: row.organization_id,
        model: row.model,
        outputTpmLimit: row.output_tpm_limit,
      })),
    onError: (error) => logger.warn({ err: error }, 'tier policy reload failed; the previous view stays'),
  });
  await tierPolicies.start();
  // Named fields only: `general` may be the whole general_settings, secrets included.
  const modes = {
    tier_policy_mode: general.tier_policy_mode,
    tier_policy_missing_service_mode: general.tier_policy_missing_service_mode,
    sources: options.sources,
    stored_policies: tierPolicies.size,
  };
  if (general.tier_policy_mode === 'enforce' && !tierPolicies.enforcing)
    logger.warn(
      modes,
      'tier_policy_mode is enforce but tier_policy_missing_service_mode is fail_open: tier policies are stored and listed but NOT enforced (enforcement needs fail_closed)',
    );
  else logger.info(modes, tierPolicies.enforcing ? 'tier policies enforced' : 'tier policies not enforced');
  return tierPolicies;
}
