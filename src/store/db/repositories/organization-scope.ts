/**
 * What belongs to an organization, as subqueries for the lists an organization administrator sees:
 * its teams, its users (directly or through a team), its keys (through their team or user), and MCP
 * scopes (bindings, policies) naming one of those.
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { DatabaseSchema } from '../tables.ts';

type Db = Kysely<DatabaseSchema>;

export function teamsOf(db: Db, organizationId: string) {
  return db.selectFrom('teams').select('team_id').where('organization_id', '=', organizationId);
}

/** A user's own organization decides; only a user without one belongs to their team's (organization-of.ts). */
export function usersOf(db: Db, organizationId: string) {
  return db
    .selectFrom('users')
    .select('user_id')
    .where((eb) =>
      eb.or([
        eb('organization_id', '=', organizationId),
        eb.and([eb('organization_id', 'is', null), eb('team_id', 'in', teamsOf(db, organizationId))]),
      ]),
    );
}

/** A key's team decides; only a key without a team belongs to its user's organization (organization-of.ts). */
export function keysOf(db: Db, organizationId: string) {
  return db
    .selectFrom('api_keys')
    .select('key_id')
    .where((eb) =>
      eb.or([
        eb('team_id', 'in', teamsOf(db, organizationId)),
        eb.and([eb('team_id', 'is', null), eb('user_id', 'in', usersOf(db, organizationId))]),
      ]),
    );
}

/** A (scope_type, scope_id) pair of a binding or policy that lies inside the organization. */
export function scopeInOrganization<T extends 'mcp_bindings' | 'mcp_tool_policies'>(
  eb: ExpressionBuilder<DatabaseSchema, T>,
  db: Db,
  organizationId: string,
) {
  const scoped = eb as unknown as ExpressionBuilder<DatabaseSchema, 'mcp_bindings'>;
  return scoped.or([
    scoped.and([scoped('scope_type', '=', 'organization'), scoped('scope_id', '=', organizationId)]),
    scoped.and([scoped('scope_type', '=', 'team'), scoped('scope_id', 'in', teamsOf(db, organizationId))]),
    scoped.and([scoped('scope_type', '=', 'api_key'), scoped('scope_id', 'in', keysOf(db, organizationId))]),
  ]);
}
