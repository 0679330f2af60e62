/**
 * POST /mcp, the MCP Streamable HTTP endpoint (stateless, JSON responses). In its own plugin scope the
 * body is read as text so that bad JSON becomes a JSON-RPC parse error (HTTP 200, -32700) instead of the
 * OpenAI envelope; Host and Origin are checked against DNS rebinding before authentication; an
 * unsupported MCP-Protocol-Version header is refused with 400 as the transport requires. GET and DELETE
 * answer 405: the gateway opens no server-initiated streams and keeps no sessions.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { GatewayError } from '../../lib/gateway-error.ts';
import { JsonRpcCode, JsonRpcError, rpcErrors } from '../../mcp/json-rpc-error.ts';
import { failure } from '../../mcp/mcp-gateway.ts';
import { isSupportedProtocolVersion, SUPPORTED_PROTOCOL_VERSIONS } from '../../mcp/protocol-version.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { callerSignal } from '../caller-signal.ts';
import { closeIfBodyUnread } from '../plugins/body-admission.ts';
import { sendGatewayError, toGatewayError } from '../plugins/error-handler.ts';
import { callerSecurity } from '../schemas/common-schemas.ts';

const JsonRpcMessage = Type.Unknown({
  description:
    'A JSON-RPC 2.0 request or notification (or a batch): initialize, ping, tools/list, tools/call.',
});

export function registerMcpGatewayRoute(app: App, deps: Pick<AppDependencies, 'mcp' | 'config'>): void {
  const allowedHosts = deps.config.general_settings.mcp_allowed_hosts;
  const checkOrigin = async (request: FastifyRequest, reply: FastifyReply) => {
    const problem = originProblem(request, allowedHosts);
    if (problem) return sendRpc(reply, 403, failure(null, rpcErrors.denied(problem)));
  };
  const common = { tags: ['mcp'], security: callerSecurity };

  app.register(async (scope: FastifyInstance) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((error, request, reply) => {
      const gatewayError = toGatewayError(error, request, scope.initialConfig.bodyLimit ?? 1_048_576);
      closeIfBodyUnread(request, reply);
      if (gatewayError.retryAfter !== undefined) reply.header('retry-after', String(gatewayError.retryAfter));
      if (error instanceof GatewayError && error.status === 401) {
        reply.header('www-authenticate', 'Bearer');
        return sendGatewayError(reply, gatewayError);
      }
      if (gatewayError.status >= 500) request.log.error({ err: error }, 'unexpected error on /mcp');
      return sendRpc(
        reply,
        gatewayError.status,
        failure(null, new JsonRpcError(JsonRpcCode.invalidRequest, gatewayError.message)),
      );
    });

    scope.post(
      '/mcp',
      {
        onRequest: [checkOrigin, app.authenticateCaller],
        schema: {
          ...common,
          summary: 'MCP gateway (JSON-RPC 2.0 over Streamable HTTP): the tools this API key may use.',
          body: JsonRpcMessage,
        },
      },
      async (request, reply) => {
        let body: unknown;
        try {
          body = JSON.parse(request.body as string);
        } catch {
          return sendRpc(reply, 200, failure(null, rpcErrors.parse()));
        }
        const version = request.headers['mcp-protocol-version'];
        if (typeof version === 'string' && !isSupportedProtocolVersion(version) && !isInitialize(body)) {
          return sendRpc(
            reply,
            400,
            failure(
              null,
              rpcErrors.invalidRequest(
                `unsupported MCP-Protocol-Version '${version.slice(0, 40)}' (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
              ),
            ),
          );
        }
        const answer = await deps.mcp.gateway.handle(body, {
          caller: request.caller,
          headers: request.headers,
          signal: callerSignal(reply),
        });
        if (answer === undefined) return reply.code(202).send();
        return sendRpc(reply, 200, answer);
      },
    );

    for (const method of ['GET', 'DELETE'] as const) {
      scope.route({
        method,
        url: '/mcp',
        schema: {
          ...common,
          summary:
            method === 'GET'
              ? 'Not offered: the gateway opens no server-initiated event streams (405).'
              : 'Not offered: the gateway keeps no MCP sessions to end (405).',
        },
        handler: async (_request, reply) =>
          sendRpc(
            reply.header('allow', 'POST'),
            405,
            failure(
              null,
              rpcErrors.invalidRequest(`${method} is not supported on /mcp; send JSON-RPC with POST.`),
            ),
          ),
      });
    }
  });
}

function sendRpc(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json').send(JSON.stringify(body));
}

function isInitialize(body: unknown): boolean {
  return body !== null && typeof body === 'object' && (body as { method?: unknown }).method === 'initialize';
}

/** Why the Host or Origin header is refused (DNS-rebinding protection), or undefined when both are fine. */
function originProblem(request: FastifyRequest, allowedHosts: readonly string[]): string | undefined {
  if (allowedHosts.includes('*')) return undefined;
  const host = hostnameOf(`http://${request.headers.host ?? ''}`);
  if (!host || !allowedHosts.includes(host)) {
    return `MCP is not served for the host '${(host ?? String(request.headers.host ?? '')).slice(0, 100)}'; add it to general_settings.mcp_allowed_hosts (DNS-rebinding protection).`;
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    const originHost = hostnameOf(origin);
    if (!originHost || !allowedHosts.includes(originHost)) {
      return `requests from the origin '${origin.slice(0, 100)}' are not allowed (see general_settings.mcp_allowed_hosts).`;
    }
  }
  return undefined;
}

function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}
