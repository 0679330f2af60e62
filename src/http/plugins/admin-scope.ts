/**
 * Scoped administration (issue 9, docs/security.md "Roles and administration"): the master key and
 * proxy administrators manage everything; an organization administrator manages only the teams, users,
 * keys, MCP bindings, policies and approvals of their organization. Every admin route has a rule here
 * (a test fails for a route without one): proxy-only, a list narrowed to the organization, or the
 * things a request touches, each of which must belong to the administrator's organization and none of
 * which may be, or belong to, a proxy administrator (issue 25: an org admin minted itself a proxy
 * admin's key). Who may hand a key to an administrator at all is the identity use case's rule.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { OrganizationOf, OwnedThing, Owner } from '../../identity/organization-of.ts';
import { errors } from '../../lib/error-catalogue.ts';

type Input = {
  params: Record<string, string>;
  body: Record<string, unknown>;
  query: Record<string, unknown>;
};

export type ScopeRule =
  /** Only the master key and proxy administrators. */
  | { kind: 'proxy' }
  /**
   * A list: an organization administrator sees only their organization's part of it. With `filters`, the
   * things its query names must belong to that organization (another organization's id is a 403).
   */
  | { kind: 'list'; filters?: (input: Input) => Array<OwnedThing | undefined> }
  /** Open to organization administrators (e.g. reading the MCP server catalogue). */
  | { kind: 'open' }
  /**
   * The things the request touches must belong to the administrator's organization (things that do
   * not exist yet are skipped; the route answers 404 or creates them). With `anchored`, at least one
   * of them must exist and belong to it: what is created lands inside the organization.
   */
  | {
      kind: 'owned';
      things: (input: Input) => Array<OwnedThing | undefined>;
      anchored?: boolean;
      /** Where the changed thing would belong afterwards: it must stay in the organization. */
      after?: (input: Input, organizationOf: OrganizationOf) => Promise<Owner>;
    };

const proxy: ScopeRule = { kind: 'proxy' };
const list: ScopeRule = { kind: 'list' };
const owned = (
  things: (input: Input) => Array<OwnedThing | undefined>,
  anchored = false,
  after?: (input: Input, organizationOf: OrganizationOf) => Promise<Owner>,
): ScopeRule => ({ kind: 'owned', things, anchored, ...(after ? { after } : {}) });
const thing = (kind: Exclude<OwnedThing['kind'], 'scope'>, id: unknown): OwnedThing | undefined =>
  typeof id === 'string' ? { kind, id } : undefined;
const scope = (body: Record<string, unknown>): OwnedThing | undefined =>
  typeof body.scope_type === 'string' && typeof body.scope_id === 'string'
    ? { kind: 'scope', scopeType: body.scope_type, scopeId: body.scope_id }
    : undefined;

const spendList: ScopeRule = {
  kind: 'list',
  filters: ({ query }) => [
    thing('organization', query.organization_id),
    thing('team', query.team_id),
    thing('user', query.user_id),
    thing('key', query.key_id),
  ],
};

/** Every admin route, by `METHOD url`. */
export const adminScopeRules: Readonly<Record<string, ScopeRule>> = {
  'POST /ui/api/organizations': proxy,
  'GET /ui/api/organizations': list,
  'GET /ui/api/organizations/:org_id': owned(({ params }) => [thing('organization', params.org_id)]),
  'PUT /ui/api/organizations/:org_id': proxy,
  'DELETE /ui/api/organizations/:org_id': proxy,
  'POST /ui/api/teams': owned(
    ({ body }) => [thing('team', body.team_id), thing('organization', body.organization_id)],
    true,
  ),
  'GET /ui/api/teams': list,
  'GET /ui/api/teams/:team_id': owned(({ params }) => [thing('team', params.team_id)]),
  'PUT /ui/api/teams/:team_id': owned(
    ({ params, body }) => [thing('team', params.team_id), thing('organization', body.organization_id)],
    true,
  ),
  'DELETE /ui/api/teams/:team_id': owned(({ params }) => [thing('team', params.team_id)], true),
  'POST /ui/api/users': owned(
    ({ body }) => [
      thing('user', body.user_id),
      thing('team', body.team_id),
      thing('organization', body.organization_id),
    ],
    true,
  ),
  'GET /ui/api/users': list,
  'GET /ui/api/users/:user_id': owned(({ params }) => [thing('user', params.user_id)]),
  'PUT /ui/api/users/:user_id': owned(
    ({ params, body }) => [
      thing('user', params.user_id),
      thing('team', body.team_id),
      thing('organization', body.organization_id),
    ],
    true,
  ),
  'DELETE /ui/api/users/:user_id': owned(({ params }) => [thing('user', params.user_id)], true),
  'POST /ui/api/keys': owned(({ body }) => [thing('team', body.team_id), thing('user', body.user_id)], true),
  'GET /ui/api/keys': list,
  'GET /ui/api/keys/:key_id': owned(({ params }) => [thing('key', params.key_id)]),
  // Clearing the team (or the user) hands the key to the other one's organization, which may be another.
  'PUT /ui/api/keys/:key_id': owned(
    ({ params, body }) => [
      thing('key', params.key_id),
      thing('team', body.team_id),
      thing('user', body.user_id),
    ],
    true,
    ({ params, body }, organizationOf) => organizationOf.ofKeyAfter(params.key_id!, body),
  ),
  'DELETE /ui/api/keys/:key_id': owned(({ params }) => [thing('key', params.key_id)], true),
  'GET /ui/api/audit': list,
  'GET /ui/api/mcp-servers': { kind: 'open' },
  // The server is open to every administrator; its bindings and policies are narrowed like their lists.
  'GET /ui/api/mcp-servers/:server_id': list,
  'POST /ui/api/mcp-servers': proxy,
  'PATCH /ui/api/mcp-servers/:server_id': proxy,
  'DELETE /ui/api/mcp-servers/:server_id': proxy,
  'GET /ui/api/mcp-servers/:server_id/operations': proxy,
  'POST /ui/api/mcp-servers/:server_id/refresh-capabilities': proxy,
  'POST /ui/api/mcp-servers/:server_id/health-check': proxy,
  'GET /ui/api/mcp-bindings': list,
  'POST /ui/api/mcp-bindings': owned(({ body }) => [scope(body)], true),
  'DELETE /ui/api/mcp-bindings/:binding_id': owned(
    ({ params }) => [thing('binding', params.binding_id)],
    true,
  ),
  'GET /ui/api/mcp-tool-policies': list,
  // A policy without a scope applies to the whole server: proxy administrators only (no anchor).
  'POST /ui/api/mcp-tool-policies': owned(({ body }) => [scope(body)], true),
  'DELETE /ui/api/mcp-tool-policies/:policy_id': owned(
    ({ params }) => [thing('policy', params.policy_id)],
    true,
  ),
  'GET /ui/api/mcp-approval-requests': list,
  'GET /ui/api/spend/logs': spendList,
  'GET /ui/api/spend/summary': spendList,
  // The console: who signed in, and this replica's routing view (no secrets, nothing of an organization).
  'GET /ui/api/session': { kind: 'open' },
  'GET /ui/api/console/deployments': { kind: 'open' },
  // Narrowed to the administrator's organization (its spend rows and its refusals).
  'GET /ui/api/console/overview': spendList,
  'GET /ui/api/spend/logs/export': spendList,
  'GET /ui/api/audit/export': list,
  // A purge reaches every organization's cached answers (and cache_scope: global ones): proxy only.
  'DELETE /ui/api/cache': proxy,
  // Tier policies are organization-level ceilings, like the organization's own limits (PUT
  // organizations is proxy-only): organization administrators read theirs but may not lift them.
  'GET /ui/api/tier-policies': list,
  'GET /ui/api/tier-policies/:tier_policy_id': owned(({ params }) => [
    thing('tier_policy', params.tier_policy_id),
  ]),
  'POST /ui/api/tier-policies': proxy,
  'PUT /ui/api/tier-policies/:tier_policy_id': proxy,
  'DELETE /ui/api/tier-policies/:tier_policy_id': proxy,
  // Gateway-wide settings: proxy administrators and the master key only.
  'GET /ui/api/settings': proxy,
  'PATCH /ui/api/settings': proxy,
  'POST /ui/api/mcp-approval-requests/:approval_request_id/decision': owned(
    ({ params }) => [thing('approval', params.approval_request_id)],
    true,
  ),
};

export const adminScopePlugin = fp(
  async (app: FastifyInstance, options: { organizationOf: OrganizationOf }) => {
    const guard = async (request: FastifyRequest) => {
      const actor = request.adminActor;
      if (actor === null || actor.kind !== 'user' || actor.role !== 'org_admin') return;
      const rule = adminScopeRules[`${request.method} ${request.routeOptions.url}`];
      if (!rule) throw errors.outsideAdminScope('this route is not open to organization administrators');
      await enforce(rule, request, actor.organizationId, options.organizationOf);
    };
    // Only routes that authenticate administrators carry the guard: proxy routes pay nothing for it.
    app.addHook('onRoute', (route) => {
      const onRequest = [route.onRequest ?? []].flat();
      if (!onRequest.includes(app.authenticateAdmin)) return;
      route.preHandler = [...[route.preHandler ?? []].flat(), guard];
    });
  },
  { name: 'switchboard-admin-scope', dependencies: ['switchboard-authentication'] },
);

async function enforce(
  rule: ScopeRule,
  request: FastifyRequest,
  organizationId: string,
  organizationOf: OrganizationOf,
): Promise<void> {
  if (rule.kind === 'open') return;
  if (rule.kind === 'proxy')
    throw errors.outsideAdminScope('only the master key and proxy administrators may do this');
  const input = {
    params: (request.params ?? {}) as Record<string, string>,
    body: (request.body ?? {}) as Record<string, unknown>,
    query: (request.query ?? {}) as Record<string, unknown>,
  };
  if (rule.kind === 'list') {
    if (rule.filters) await enforceFilters(rule.filters(input), organizationId, organizationOf);
    input.query.organization_id = organizationId; // the list is narrowed to the organization
    return;
  }
  if (input.body.role === 'proxy_admin' || input.body.role === 'admin')
    throw errors.outsideAdminScope('organization administrators may not grant the proxy_admin role');
  // Clearing the organization would take a team or user (and their keys) out of the organization's
  // budgets and limits, beyond the administrator's reach.
  if (input.body.organization_id === null)
    throw errors.outsideAdminScope(
      'organization administrators may not take a team or user out of their organization',
    );
  let anchored = false;
  const deleting = request.method === 'DELETE';
  for (const item of rule.things(input)) {
    if (!item) continue;
    const owner = await organizationOf.of(item);
    if (owner === undefined) continue;
    if (owner !== organizationId)
      throw errors.outsideAdminScope(`it belongs to another organization (or to none)`);
    // A proxy administrator inside the organization is still out of reach: changing them or handing
    // them a key would let an organization administrator act as one (issue 25).
    if (await organizationOf.reachesProxyAdmin(item, deleting))
      throw errors.outsideAdminScope('it is, or belongs to, a proxy administrator');
    anchored = true;
  }
  if (rule.anchored && !anchored) {
    throw errors.outsideAdminScope(
      'name something of your organization (organization_id, team_id, user_id or scope)',
    );
  }
  if (rule.after) {
    const owner = await rule.after(input, organizationOf);
    if (owner !== undefined && owner !== organizationId)
      throw errors.outsideAdminScope(
        'after this change it would belong to another organization (or to none)',
      );
  }
}

/** A filter naming another organization, or a team, user or key of another one (or of none), is refused. */
async function enforceFilters(
  things: Array<OwnedThing | undefined>,
  organizationId: string,
  organizationOf: OrganizationOf,
): Promise<void> {
  for (const item of things) {
    if (!item) continue;
    const owner = item.kind === 'organization' ? item.id : await organizationOf.of(item);
    // An unknown owner (a deleted key, team or user) is refused too: its spend rows still carry its
    // own organization, which an org admin's forced filter would not apply to every summary.
    if (owner !== organizationId)
      throw errors.outsideAdminScope(
        'the filter names something of another organization (or of none, or deleted)',
      );
  }
}
