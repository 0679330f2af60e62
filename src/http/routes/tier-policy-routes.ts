/**
 * Tier policies (docs/limits.md "Tier policies"): an output-token limit per organization and exact
 * caller-facing model. POST creates (one per organization and model), PUT changes the limit, GET reads,
 * DELETE removes; each write is audited and reaches every replica within a second.
 */
import Type from 'typebox';
import { auditContext } from '../../identity/admin-audit.ts';
import { PageQuery } from '../../identity/admin-schemas.ts';
import { TierPolicyCreateBody, TierPolicyUpdateBody } from '../../identity/tier-policy-admin.ts';
import type { TierPolicyRecord } from '../../store/db/repositories/tier-policy-repository.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import { ListView, timestampedView } from '../schemas/identity-views.ts';

const TierPolicyView = Type.Object({
  tier_policy_id: Type.String(),
  organization_id: Type.String(),
  model: Type.String(),
  output_tpm_limit: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

const TierPolicyQuery = Type.Object({
  ...PageQuery.properties,
  organization_id: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
});

const path = '/ui/api/tier-policies';
const one = `${path}/:tier_policy_id`;
const params = Type.Object({ tier_policy_id: Type.String({ minLength: 1, maxLength: 128 }) });

function schema<Extra extends object, Responses extends object>(
  summary: string,
  extra: Extra,
  responses: Responses,
) {
  return {
    tags: ['admin'],
    security: adminSecurity,
    summary,
    ...extra,
    response: { ...responses, ...errorResponses, 409: errorResponses[400] },
  };
}

const view = (record: TierPolicyRecord) => timestampedView(record);

export function registerTierPolicyRoutes(app: App, deps: Pick<AppDependencies, 'tierPolicyAdmin'>): void {
  const admin = deps.tierPolicyAdmin;
  const onRequest = app.authenticateAdmin;

  app.post(
    path,
    {
      onRequest,
      schema: schema(
        'Create a tier policy: an output-token limit for one organization and one exact model id.',
        { body: TierPolicyCreateBody },
        { 201: TierPolicyView },
      ),
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(view(await admin.create(request.body, auditContext(request.adminActor, request.id)))),
  );

  app.get(
    path,
    {
      onRequest,
      schema: schema(
        'List tier policies, oldest first; filter by organization_id and model.',
        { querystring: TierPolicyQuery },
        { 200: ListView(TierPolicyView) },
      ),
    },
    async (request) => {
      const { limit = 100, offset = 0, organization_id, model } = request.query;
      const page = await admin.list({ limit, offset }, { organizationId: organization_id, model });
      return { object: 'list' as const, data: page.items.map(view), total: page.total, limit, offset };
    },
  );

  app.get(
    one,
    { onRequest, schema: schema('Get a tier policy.', { params }, { 200: TierPolicyView }) },
    async (request) => view(await admin.get(request.params.tier_policy_id)),
  );

  app.put(
    one,
    {
      onRequest,
      schema: schema(
        "Change a tier policy's output_tpm_limit (its organization and model stay).",
        { params, body: TierPolicyUpdateBody },
        { 200: TierPolicyView },
      ),
    },
    async (request) =>
      view(
        await admin.update(
          request.params.tier_policy_id,
          request.body,
          auditContext(request.adminActor, request.id),
        ),
      ),
  );

  app.delete(
    one,
    {
      onRequest,
      schema: schema(
        'Delete a tier policy.',
        { params },
        { 200: Type.Object({ deleted: Type.Literal(true), tier_policy_id: Type.String() }) },
      ),
    },
    async (request) => {
      const id = request.params.tier_policy_id;
      await admin.remove(id, auditContext(request.adminActor, request.id));
      return { deleted: true as const, tier_policy_id: id };
    },
  );
}
