/**
 * The tier-policy admin use cases (spec: Limits > Output tokens rule 8): an output-token limit per
 * organization and exact caller-facing model. Like identity changes, each write is validated first,
 * then written in one transaction with its audit entry and a queued invalidation (spec Events 5), which
 * is published after commit so every replica reloads its tier-policy view.
 */
import type { Kysely } from 'kysely';
import Type, { type Static } from 'typebox';
import type { Clock } from '../lib/clock.ts';
import { errors } from '../lib/error-catalogue.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import { newId } from '../lib/random.ts';
import type { Page, PageRequest } from '../store/db/repositories/limit-columns.ts';
import {
  type TierPolicyFilter,
  type TierPolicyRecord,
  TierPolicyRepository,
} from '../store/db/repositories/tier-policy-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import { type AuditChange, type AuditContext, appendAudit } from './admin-audit.ts';
import { EntityId } from './admin-schemas.ts';
import type { AuthInvalidationPublisher } from './auth-invalidation.ts';
import { requireOrganization } from './identity-admin-checks.ts';
import { MAX_OUTPUT_TPM, modelIdProblem } from './limit-fields.ts';

const OutputTpmLimit = Type.Integer({
  minimum: 1,
  maximum: MAX_OUTPUT_TPM,
  description: 'output tokens per UTC minute, an integer 1 to 2147483647',
});

export const TierPolicyCreateBody = Type.Object(
  {
    organization_id: EntityId,
    model: Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        'exact caller-facing model id (a model group or route-group id): at most 256 UTF-8 bytes, no wildcards, control characters or leading/trailing spaces',
    }),
    output_tpm_limit: OutputTpmLimit,
  },
  { additionalProperties: false },
);

/** Only the limit changes; the organization and model are the policy's identity. */
export const TierPolicyUpdateBody = Type.Object(
  { output_tpm_limit: OutputTpmLimit },
  { additionalProperties: false },
);

export type TierPolicyCreateBody = Static<typeof TierPolicyCreateBody>;
export type TierPolicyUpdateBody = Static<typeof TierPolicyUpdateBody>;

export interface TierPolicyAdminOptions {
  db: Kysely<DatabaseSchema>;
  publisher: AuthInvalidationPublisher;
  clock: Clock;
  /**
   * Runs before a write that leaves a policy stored while tier policies are enforced; throws the
   * 400/409 naming the setting when the output-policy requirements are not met.
   */
  checkRequirements?: () => Promise<void> | void;
  /** Awaited after each committed write: this replica's view has the change before the answer goes out. */
  applied?: () => Promise<void>;
}

export class TierPolicyAdmin {
  private readonly options: TierPolicyAdminOptions;

  constructor(options: TierPolicyAdminOptions) {
    this.options = options;
  }

  async create(body: TierPolicyCreateBody, context: AuditContext): Promise<TierPolicyRecord> {
    const model = validModel(body.model);
    const limit = validLimit(body.output_tpm_limit);
    await this.options.checkRequirements?.();
    try {
      return await this.insert(body.organization_id, model, limit, context);
    } catch (error) {
      // A concurrent create of the same pair lost the unique constraint: the same 409 as a visible one.
      const winner = await new TierPolicyRepository(this.options.db).find(body.organization_id, model);
      if (winner && !(error instanceof GatewayError)) throw duplicate(body.organization_id, model, winner);
      throw error;
    }
  }

  private insert(
    organizationId: string,
    model: string,
    limit: number,
    context: AuditContext,
  ): Promise<TierPolicyRecord> {
    return this.change(organizationId, context, async (trx) => {
      await requireOrganization(trx, organizationId);
      const repository = new TierPolicyRepository(trx);
      const existing = await repository.find(organizationId, model);
      if (existing) throw duplicate(organizationId, model, existing);
      const id = newId('tier');
      await repository.insert(
        { tier_policy_id: id, organization_id: organizationId, model, output_tpm_limit: limit },
        this.options.clock.now(),
      );
      const record = (await repository.get(id))!;
      return { result: record, audit: entry('create', record, null, record) };
    });
  }

  async update(id: string, body: TierPolicyUpdateBody, context: AuditContext): Promise<TierPolicyRecord> {
    const limit = validLimit(body.output_tpm_limit);
    const current = await this.get(id);
    await this.options.checkRequirements?.();
    return this.change(current.organization_id, context, async (trx) => {
      const repository = new TierPolicyRepository(trx);
      const before = await repository.get(id);
      if (!before || !(await repository.updateLimit(id, limit, this.options.clock.now())))
        throw errors.notFound('tier policy', id);
      const record = (await repository.get(id))!;
      return { result: record, audit: entry('update', record, before, record) };
    });
  }

  async get(id: string): Promise<TierPolicyRecord> {
    const record = await new TierPolicyRepository(this.options.db).get(id);
    if (!record) throw errors.notFound('tier policy', id);
    return record;
  }

  list(page: PageRequest, filter: TierPolicyFilter): Promise<Page<TierPolicyRecord>> {
    return new TierPolicyRepository(this.options.db).list(page, filter);
  }

  async remove(id: string, context: AuditContext): Promise<void> {
    const current = await this.get(id);
    await this.change(current.organization_id, context, async (trx) => {
      const repository = new TierPolicyRepository(trx);
      const before = await repository.get(id);
      if (!before || !(await repository.delete(id))) throw errors.notFound('tier policy', id);
      return { result: undefined, audit: entry('delete', before, before, null) };
    });
  }

  /** The write, its audit entry and its queued invalidation in one transaction; published after commit. */
  private async change<T>(
    organizationId: string,
    context: AuditContext,
    work: (trx: Kysely<DatabaseSchema>) => Promise<{ result: T; audit: AuditChange }>,
  ): Promise<T> {
    const { publisher, clock } = this.options;
    const { result, queued } = await this.options.db.transaction().execute(async (trx) => {
      const { result, audit } = await work(trx);
      await appendAudit(trx, context, audit, clock.now());
      return {
        result,
        queued: await publisher.enqueue(trx, [{ kind: 'tier_policies', id: organizationId }]),
      };
    });
    await publisher.publish(queued);
    await this.options.applied?.();
    return result;
  }
}

function duplicate(organizationId: string, model: string, existing: TierPolicyRecord): GatewayError {
  return errors.conflict(
    `Organization '${organizationId}' already has a tier policy for model ${JSON.stringify(model)} (${existing.tier_policy_id}); update it with PUT /ui/api/tier-policies/${existing.tier_policy_id}.`,
  );
}

/** The schema checks shape; this checks what it cannot (UTF-8 bytes) and holds for direct callers too. */
function validModel(model: unknown): string {
  const problem = typeof model === 'string' ? modelIdProblem(model) : 'must be a string';
  if (problem) throw errors.invalidRequest(`model: model id ${JSON.stringify(model)} ${problem}.`, 'model');
  return model as string;
}

function validLimit(limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_OUTPUT_TPM)
    throw errors.invalidRequest(
      `output_tpm_limit: must be an integer from 1 to ${MAX_OUTPUT_TPM}.`,
      'output_tpm_limit',
    );
  return limit;
}

function entry(
  verb: 'create' | 'update' | 'delete',
  policy: TierPolicyRecord,
  before: TierPolicyRecord | null,
  after: TierPolicyRecord | null,
): AuditChange {
  return {
    action: `tier_policy.${verb}`,
    targetType: 'tier_policy',
    targetId: policy.tier_policy_id,
    organizationId: policy.organization_id,
    before,
    after,
  };
}
