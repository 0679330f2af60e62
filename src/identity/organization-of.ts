/**
 * Which organization an administered thing belongs to, so organization administrators can be kept to
 * their own (issue 9: an admin of one organization changed another's team). A team belongs to its
 * organization, a user to theirs (directly or through their team), a key to its team's or user's, an
 * MCP binding, policy or approval to the scope or key it names.
 */
import type { Kysely } from 'kysely';
import { type AccessRepositories, accessRepositories } from '../store/db/repositories/access-repositories.ts';
import type { DatabaseSchema } from '../store/db/tables.ts';

export type OwnedThing =
  | {
      kind: 'organization' | 'team' | 'user' | 'key' | 'binding' | 'policy' | 'approval' | 'tier_policy';
      id: string;
    }
  | { kind: 'scope'; scopeType: string; scopeId: string };

/** An organization id; null when the thing belongs to none (or is server-wide); undefined when it does not exist. */
export type Owner = string | null | undefined;

/** A change of a key's owners: a field left out keeps its stored value, null clears it. */
export interface KeyOwnersChange {
  team_id?: unknown;
  user_id?: unknown;
}

export class OrganizationOf {
  private readonly repositories: AccessRepositories;

  constructor(db: Kysely<DatabaseSchema>) {
    this.repositories = accessRepositories(db);
  }

  /** The organization of a key with these owners: its team's, or without a team its user's. */
  async ofKeyOwners(teamId: string | null, userId: string | null): Promise<Owner> {
    if (teamId) return (await this.of({ kind: 'team', id: teamId })) ?? null;
    return userId ? ((await this.of({ kind: 'user', id: userId })) ?? null) : null;
  }

  /** The organization a key would belong to after `change`; undefined when the key does not exist. */
  async ofKeyAfter(keyId: string, change: KeyOwnersChange): Promise<Owner> {
    const key = await this.repositories.apiKeys.get(keyId);
    if (!key) return undefined;
    const owner = (next: unknown, stored: string | null) =>
      next === undefined ? stored : typeof next === 'string' ? next : null;
    return this.ofKeyOwners(owner(change.team_id, key.team_id), owner(change.user_id, key.user_id));
  }

  async of(thing: OwnedThing): Promise<Owner> {
    const { repositories } = this;
    switch (thing.kind) {
      case 'organization':
        return (await repositories.organizations.get(thing.id)) ? thing.id : undefined;
      case 'team': {
        const team = await repositories.teams.get(thing.id);
        return team?.organization_id;
      }
      case 'user': {
        const user = await repositories.users.get(thing.id);
        if (!user) return undefined;
        return (
          user.organization_id ??
          (user.team_id ? ((await this.of({ kind: 'team', id: user.team_id })) ?? null) : null)
        );
      }
      case 'key': {
        const key = await repositories.apiKeys.get(thing.id);
        return key && this.ofKeyOwners(key.team_id, key.user_id);
      }
      case 'scope':
        return this.ofScope(thing.scopeType, thing.scopeId);
      case 'binding': {
        const binding = await repositories.mcpBindings.get(thing.id);
        return binding && this.ofScope(binding.scope_type, binding.scope_id);
      }
      case 'policy': {
        const policy = await repositories.mcpToolPolicies.get(thing.id);
        return policy && this.ofScope(policy.scope_type, policy.scope_id);
      }
      case 'tier_policy':
        return (await repositories.tierPolicies.get(thing.id))?.organization_id;
      case 'approval': {
        const approval = await repositories.mcpApprovals.get(thing.id);
        if (!approval) return undefined;
        return approval.key_id ? ((await this.of({ kind: 'key', id: approval.key_id })) ?? null) : null;
      }
    }
  }

  /**
   * Whether a write to `thing` reaches a proxy administrator (issue 25): the user is one, the key or the
   * api_key scope of a binding or policy is one's, or (when `deleting` a team) the team holds one's key.
   */
  async reachesProxyAdmin(thing: OwnedThing, deleting: boolean): Promise<boolean> {
    const { repositories } = this;
    switch (thing.kind) {
      case 'user':
        return (await repositories.users.get(thing.id))?.role === 'proxy_admin';
      case 'key': {
        const key = await repositories.apiKeys.get(thing.id);
        return key?.user_id ? this.reachesProxyAdmin({ kind: 'user', id: key.user_id }, deleting) : false;
      }
      case 'team':
        return deleting && repositories.apiKeys.teamHoldsProxyAdminKey(thing.id);
      case 'scope':
        return (
          thing.scopeType === 'api_key' && this.reachesProxyAdmin({ kind: 'key', id: thing.scopeId }, false)
        );
      case 'binding': {
        const binding = await repositories.mcpBindings.get(thing.id);
        return binding ? this.reachesProxyAdmin(scopeOf(binding), false) : false;
      }
      case 'policy': {
        const policy = await repositories.mcpToolPolicies.get(thing.id);
        return policy ? this.reachesProxyAdmin(scopeOf(policy), false) : false;
      }
      default:
        return false; // organizations, tier policies and approvals belong to no single user
    }
  }

  private async ofScope(scopeType: string, scopeId: string): Promise<Owner> {
    if (scopeType === 'organization') return this.of({ kind: 'organization', id: scopeId });
    if (scopeType === 'team') return this.of({ kind: 'team', id: scopeId });
    if (scopeType === 'api_key') return this.of({ kind: 'key', id: scopeId });
    return null; // a server-wide policy belongs to no organization
  }
}

function scopeOf(scoped: { scope_type: string; scope_id: string }): OwnedThing {
  return { kind: 'scope', scopeType: scoped.scope_type, scopeId: scoped.scope_id };
}
