import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
/** Admin API for MCP servers under /ui/api/mcp-servers: CRUD, refresh-capabilities, health-check, operations. */
import { auditContext } from '../../identity/admin-audit.ts';
import { PageQuery } from '../../identity/admin-schemas.ts';
import { McpServerCreateBody, McpServerUpdateBody } from '../../mcp/admin/admin-schemas.ts';
import { withUniformFailures } from '../../mcp/admin/mcp-admin-views.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import { DeletedView, ListView } from '../schemas/identity-views.ts';
import {
  McpHealthView,
  McpOperationsView,
  McpRefreshView,
  McpServerCreatedView,
  McpServerDetailView,
  McpServerView,
} from '../schemas/mcp-views.ts';

const PathId = Type.String({ minLength: 1, maxLength: 128 });

/** Upstream failure details are for the master key; other admins see one uniform message (issue 9). */
function forActor<T extends object>(request: FastifyRequest, view: T): T {
  return request.adminActor.kind === 'master' ? view : withUniformFailures(view);
}

export function registerMcpServerRoutes(app: App, deps: Pick<AppDependencies, 'mcp'>): void {
  const { servers, diagnostics } = deps.mcp;
  const onRequest = app.authenticateAdmin;
  const common = { tags: ['admin'], security: adminSecurity };
  const params = Type.Object({ server_id: PathId });
  const conflict = { 409: errorResponses[400] };

  app.get(
    '/ui/api/mcp-servers',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'List MCP servers (tokens are never returned, only whether one is set).',
        querystring: PageQuery,
        response: { 200: ListView(McpServerView), ...errorResponses },
      },
    },
    async (request) => {
      const { limit = 100, offset = 0 } = request.query;
      const page = await servers.list({ limit, offset });
      const data = page.items.map((item) => forActor(request, item));
      return { object: 'list' as const, data, total: page.total, limit, offset };
    },
  );

  app.post(
    '/ui/api/mcp-servers',
    {
      onRequest,
      schema: {
        ...common,
        summary:
          'Register an MCP server and fetch its tool catalogue (`transport: http` is stored as streamable_http).',
        body: McpServerCreateBody,
        response: { 201: McpServerCreatedView, ...errorResponses, ...conflict },
      },
    },
    async (request, reply) => {
      const { server, refresh } = await servers.create(
        request.body,
        auditContext(request.adminActor, request.id),
      );
      return reply
        .code(201)
        .send({ ...forActor(request, server), capabilities_refresh: forActor(request, refresh) });
    },
  );

  app.get(
    '/ui/api/mcp-servers/:server_id',
    {
      onRequest,
      schema: {
        ...common,
        summary:
          'One MCP server with its stored tools, bindings and policies (organization administrators: those of their organization, and the server-wide defaults).',
        params,
        querystring: Type.Object({ organization_id: Type.Optional(PathId) }),
        response: { 200: McpServerDetailView, ...errorResponses },
      },
    },
    async (request) =>
      forActor(request, await servers.detail(request.params.server_id, request.query.organization_id)),
  );

  app.patch(
    '/ui/api/mcp-servers/:server_id',
    {
      onRequest,
      schema: {
        ...common,
        summary:
          'Update an MCP server; omitted fields keep their value, `auth_config.token: null` clears the token.',
        params,
        body: McpServerUpdateBody,
        response: { 200: McpServerView, ...errorResponses, ...conflict },
      },
    },
    async (request) =>
      forActor(
        request,
        await servers.update(
          request.params.server_id,
          request.body,
          auditContext(request.adminActor, request.id),
        ),
      ),
  );

  app.delete(
    '/ui/api/mcp-servers/:server_id',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Delete an MCP server with its tools, bindings, policies and approval requests.',
        params,
        response: { 200: DeletedView('server_id'), ...errorResponses },
      },
    },
    async (request) => {
      await servers.delete(request.params.server_id, auditContext(request.adminActor, request.id));
      return { deleted: true as const, server_id: request.params.server_id };
    },
  );

  app.get(
    '/ui/api/mcp-servers/:server_id/operations',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Recent tool calls and failures (this process) and approval counts of an MCP server.',
        params,
        response: { 200: McpOperationsView, ...errorResponses },
      },
    },
    async (request) =>
      forActor(request, await diagnostics.operations(await servers.record(request.params.server_id))),
  );

  app.post(
    '/ui/api/mcp-servers/:server_id/refresh-capabilities',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Fetch the tool catalogue from the upstream now and store it.',
        params,
        response: { 200: McpRefreshView, ...errorResponses },
      },
    },
    async (request) => {
      const outcome = await servers.refresh(request.params.server_id);
      return { ...forActor(request, outcome), server: forActor(request, outcome.server) };
    },
  );

  app.post(
    '/ui/api/mcp-servers/:server_id/health-check',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'Run initialize and tools/list against the upstream; report outcome and latency.',
        params,
        response: { 200: McpHealthView, ...errorResponses },
      },
    },
    async (request) =>
      forActor(request, await diagnostics.healthCheck(await servers.record(request.params.server_id))),
  );
}
