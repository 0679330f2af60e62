/** Admin API for MCP bindings, tool policies and approval requests under /ui/api. */
import Type from 'typebox';
import { auditContext } from '../../identity/admin-audit.ts';
import { PageQuery } from '../../identity/admin-schemas.ts';
import {
  McpBindingBody,
  McpDecisionBody,
  McpToolPolicyBody,
  ScopeType,
} from '../../mcp/admin/admin-schemas.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import { DeletedView, ListView } from '../schemas/identity-views.ts';
import { McpApprovalView, McpBindingView, McpPolicyView } from '../schemas/mcp-views.ts';

const PathId = Type.String({ minLength: 1, maxLength: 128 });

const common = { tags: ['admin'], security: adminSecurity };

export function registerMcpAccessRoutes(app: App, deps: Pick<AppDependencies, 'mcp'>): void {
  registerBindingRoutes(app, deps.mcp.access);
  registerPolicyRoutes(app, deps.mcp.access);
  registerApprovalRoutes(app, deps.mcp.approvals);
}

function registerBindingRoutes(app: App, access: AppDependencies['mcp']['access']): void {
  const onRequest = app.authenticateAdmin;
  app.get(
    '/ui/api/mcp-bindings',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'List MCP bindings (who may see which server tools).',
        querystring: Type.Object({
          ...PageQuery.properties,
          server_id: Type.Optional(Type.String()),
          scope_type: Type.Optional(ScopeType),
          scope_id: Type.Optional(Type.String()),
          organization_id: Type.Optional(Type.String()),
        }),
        response: { 200: ListView(McpBindingView), ...errorResponses },
      },
    },
    async (request) => {
      const { limit = 100, offset = 0, server_id, scope_type, scope_id, organization_id } = request.query;
      const page = await access.listBindings(
        { limit, offset },
        { serverId: server_id, scopeType: scope_type, scopeId: scope_id, organizationId: organization_id },
      );
      return { object: 'list' as const, data: page.items, total: page.total, limit, offset };
    },
  );
  app.post(
    '/ui/api/mcp-bindings',
    {
      onRequest,
      schema: {
        ...common,
        summary:
          'Create a binding, or update the one of the same server and scope (201 created, 200 updated).',
        body: McpBindingBody,
        response: { 200: McpBindingView, 201: McpBindingView, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { binding, created } = await access.upsertBinding(
        request.body,
        auditContext(request.adminActor, request.id),
      );
      return reply.code(created ? 201 : 200).send(binding);
    },
  );
  app.delete(
    '/ui/api/mcp-bindings/:binding_id',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Delete an MCP binding.',
        params: Type.Object({ binding_id: PathId }),
        response: { 200: DeletedView('binding_id'), ...errorResponses },
      },
    },
    async (request) => {
      await access.deleteBinding(request.params.binding_id, auditContext(request.adminActor, request.id));
      return { deleted: true as const, binding_id: request.params.binding_id };
    },
  );
}

function registerPolicyRoutes(app: App, access: AppDependencies['mcp']['access']): void {
  const onRequest = app.authenticateAdmin;
  app.get(
    '/ui/api/mcp-tool-policies',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'List MCP tool policies.',
        querystring: Type.Object({
          ...PageQuery.properties,
          server_id: Type.Optional(Type.String()),
          tool_name: Type.Optional(Type.String()),
          scope_type: Type.Optional(ScopeType),
          scope_id: Type.Optional(Type.String()),
          organization_id: Type.Optional(Type.String()),
        }),
        response: { 200: ListView(McpPolicyView), ...errorResponses },
      },
    },
    async (request) => {
      const {
        limit = 100,
        offset = 0,
        server_id,
        tool_name,
        scope_type,
        scope_id,
        organization_id,
      } = request.query;
      const page = await access.listPolicies(
        { limit, offset },
        {
          serverId: server_id,
          toolName: tool_name,
          scopeType: scope_type,
          scopeId: scope_id,
          organizationId: organization_id,
        },
      );
      return { object: 'list' as const, data: page.items, total: page.total, limit, offset };
    },
  );
  app.post(
    '/ui/api/mcp-tool-policies',
    {
      onRequest,
      schema: {
        ...common,
        summary:
          'Create a tool policy, or update the one of the same server, tool and scope; omit the scope for the server-wide default.',
        body: McpToolPolicyBody,
        response: { 200: McpPolicyView, 201: McpPolicyView, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { policy, created } = await access.upsertPolicy(
        request.body,
        auditContext(request.adminActor, request.id),
      );
      return reply.code(created ? 201 : 200).send(policy);
    },
  );
  app.delete(
    '/ui/api/mcp-tool-policies/:policy_id',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Delete an MCP tool policy.',
        params: Type.Object({ policy_id: PathId }),
        response: { 200: DeletedView('policy_id'), ...errorResponses },
      },
    },
    async (request) => {
      await access.deletePolicy(request.params.policy_id, auditContext(request.adminActor, request.id));
      return { deleted: true as const, policy_id: request.params.policy_id };
    },
  );
}

function registerApprovalRoutes(app: App, approvals: AppDependencies['mcp']['approvals']): void {
  const onRequest = app.authenticateAdmin;
  app.get(
    '/ui/api/mcp-approval-requests',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'List MCP approval requests, newest first, with what the viewer may decide.',
        querystring: Type.Object({
          ...PageQuery.properties,
          server_id: Type.Optional(Type.String()),
          status: Type.Optional(Type.Enum(['pending', 'approved', 'rejected', 'expired'])),
          organization_id: Type.Optional(Type.String()),
        }),
        response: { 200: ListView(McpApprovalView), ...errorResponses },
      },
    },
    async (request) => {
      const { limit = 100, offset = 0, server_id, status, organization_id } = request.query;
      const page = await approvals.list(
        { limit, offset },
        { serverId: server_id, status, organizationId: organization_id },
        request.adminActor,
      );
      return { object: 'list' as const, data: page.items, total: page.total, limit, offset };
    },
  );
  app.post(
    '/ui/api/mcp-approval-requests/:approval_request_id/decision',
    {
      onRequest,
      schema: {
        ...common,
        summary:
          'Approve or reject a pending request (403: the owner of the calling key may only reject; 404: not pending; 409: expired).',
        params: Type.Object({ approval_request_id: PathId }),
        body: McpDecisionBody,
        response: { 200: McpApprovalView, 409: errorResponses[400], ...errorResponses },
      },
    },
    async (request) =>
      approvals.decide(
        request.params.approval_request_id,
        request.body,
        request.adminActor,
        auditContext(request.adminActor, request.id),
      ),
  );
}
