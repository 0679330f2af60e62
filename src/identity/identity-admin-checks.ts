/** Checks shared by the identity admin use cases: limit maps, references that must exist, ids, durations. */
import type { Kysely } from 'kysely';
import type { LimitFields } from '../canonical/caller.ts';
import { errors } from '../lib/error-catalogue.ts';
import type { GatewayError } from '../lib/gateway-error.ts';
import { accessRepositories } from '../store/db/repositories/access-repositories.ts';
import type { UserChanges } from '../store/db/repositories/user-repository.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';
import type { UserBody } from './admin-schemas.ts';
import { checkBudgets, checkModelMaps, normalizeModelMaps } from './limit-fields.ts';

type Transaction = Kysely<DatabaseSchema>;

/** A user body with `admin`, the earlier name of the proxy administrator role, stored as proxy_admin. */
export function userChanges(body: UserBody): UserChanges {
  const { role, ...rest } = validLimits(body);
  return role === undefined ? rest : { ...rest, role: role === 'admin' ? 'proxy_admin' : role };
}

export function validLimits<T extends Partial<LimitFields>>(body: T): T {
  const problem: GatewayError | undefined = checkModelMaps(body) ?? checkBudgets(body);
  if (problem) throw problem;
  return normalizeModelMaps(body);
}

/** Whether a write sets an output-token limit (null and omitted fields clear or keep, never add one). */
export function activatesOutputPolicy(changes: Partial<LimitFields>): boolean {
  const map = changes.model_output_tpm_limit;
  return typeof changes.output_tpm_limit === 'number' || (map != null && Object.keys(map).length > 0);
}

export async function requireOrganization(
  trx: Transaction,
  organizationId: string | null | undefined,
): Promise<void> {
  if (!organizationId) return;
  if (!(await accessRepositories(trx).organizations.get(organizationId)))
    throw missingReference('organization_id', 'organization', organizationId);
}

export async function requireMembership(
  trx: Transaction,
  teamId: string | null | undefined,
  organizationId: string | null | undefined,
): Promise<void> {
  await requireOrganization(trx, organizationId);
  if (!teamId) return;
  const team = await accessRepositories(trx).teams.get(teamId);
  if (!team) throw missingReference('team_id', 'team', teamId);
  if (organizationId && team.organization_id && team.organization_id !== organizationId) {
    throw errors.invalidRequest(
      `team_id: team '${teamId}' belongs to organization '${team.organization_id}', not '${organizationId}'.`,
      'team_id',
    );
  }
}

export async function requireKeyOwners(
  trx: Transaction,
  userId: string | null | undefined,
  teamId: string | null | undefined,
): Promise<void> {
  if (userId && !(await accessRepositories(trx).users.get(userId)))
    throw missingReference('user_id', 'user', userId);
  if (teamId && !(await accessRepositories(trx).teams.get(teamId)))
    throw missingReference('team_id', 'team', teamId);
}

/**
 * Only the master key gives a key to an administrator other than the actor (issue 25): whoever mints a
 * key knows its secret, so a key minted for a peer lets its minter act as the peer (approve its own MCP
 * calls, or, with a proxy administrator's key, administer the whole gateway). `role` is the user's role
 * after the change when the same request sets it; otherwise the stored one is read.
 */
export async function requireKeyRecipient(
  trx: Transaction,
  actor: string,
  userId: string | null | undefined,
  role?: UserBody['role'],
): Promise<void> {
  if (!userId || actor === 'master' || actor === `user:${userId}`) return;
  const recipientRole = role ?? (await accessRepositories(trx).users.get(userId))?.role;
  if (recipientRole !== undefined && recipientRole !== 'member')
    throw errors.keyForAnotherAdministrator(userId);
}

function missingReference(field: string, resource: string, id: string): GatewayError {
  return errors.invalidRequest(`${field}: no ${resource} with id '${id}' exists; create it first.`, field);
}

export function idMismatch(field: string): GatewayError {
  return errors.invalidRequest(
    `${field} in the body must match the id in the path (ids cannot be changed).`,
    field,
  );
}

export function notFound(resource: string, id: string): never {
  throw errors.notFound(resource, id);
}
