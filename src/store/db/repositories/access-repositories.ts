/**
 * The repositories that decide who may do what (identities, keys, MCP bindings, policies, approvals,
 * tier policies), over one database or one transaction, so the rules that read them build none inline.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../tables.ts';
import { ApiKeyRepository } from './api-key-repository.ts';
import { McpApprovalRepository } from './mcp-approval-repository.ts';
import { McpBindingRepository } from './mcp-binding-repository.ts';
import { McpToolPolicyRepository } from './mcp-tool-policy-repository.ts';
import { OrganizationRepository } from './organization-repository.ts';
import { TeamRepository } from './team-repository.ts';
import { TierPolicyRepository } from './tier-policy-repository.ts';
import { UserRepository } from './user-repository.ts';

export interface AccessRepositories {
  readonly organizations: OrganizationRepository;
  readonly teams: TeamRepository;
  readonly users: UserRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly mcpBindings: McpBindingRepository;
  readonly mcpToolPolicies: McpToolPolicyRepository;
  readonly mcpApprovals: McpApprovalRepository;
  readonly tierPolicies: TierPolicyRepository;
}

export function accessRepositories(db: Kysely<DatabaseSchema>): AccessRepositories {
  return Object.freeze({
    organizations: new OrganizationRepository(db),
    teams: new TeamRepository(db),
    users: new UserRepository(db),
    apiKeys: new ApiKeyRepository(db),
    mcpBindings: new McpBindingRepository(db),
    mcpToolPolicies: new McpToolPolicyRepository(db),
    mcpApprovals: new McpApprovalRepository(db),
    tierPolicies: new TierPolicyRepository(db),
  });
}
