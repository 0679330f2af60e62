/**
 * Builds the Fastify application from its dependencies without listening, so tests and the CLI share
 * one construction (Fastify's testing guide). Routes are thin; each calls one use case.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import type { App, AppDependencies } from './app-types.ts';
import { OpenStreams } from './open-streams.ts';
import { adminNoStorePlugin } from './plugins/admin-no-store.ts';
import { adminScopePlugin } from './plugins/admin-scope.ts';
import { authenticationPlugin } from './plugins/authentication.ts';
import { bodyAdmissionPlugin } from './plugins/body-admission.ts';
import { bodyReadDeadlinePlugin } from './plugins/body-read-deadline.ts';
import { errorHandlerPlugin, sendGatewayError, toGatewayError } from './plugins/error-handler.ts';
import { openApiPlugin } from './plugins/openapi.ts';
import { requestMetricsPlugin } from './plugins/request-metrics.ts';
import { registerAuditRoutes } from './routes/audit-routes.ts';
import { registerBatchRoutes } from './routes/batch-routes.ts';
import { registerCacheRoutes } from './routes/cache-routes.ts';
import { registerChatCompletionsRoute } from './routes/chat-completions-route.ts';
import { registerCompletionsRoute } from './routes/completions-route.ts';
import { registerConsoleRoutes } from './routes/console-routes.ts';
import { registerConsoleStatic } from './routes/console-static.ts';
import { registerEmbeddingsRoute } from './routes/embeddings-route.ts';
import { registerExportRoutes } from './routes/export-routes.ts';
import { registerFileRoutes } from './routes/file-routes.ts';
import { registerHealthRoutes } from './routes/health-routes.ts';
import { registerIdentityRoutes } from './routes/identity-routes.ts';
import { registerImagesRoute } from './routes/images-route.ts';
import { registerLiteLlmManagementRoutes } from './routes/litellm-management-routes.ts';
import { registerMcpAccessRoutes } from './routes/mcp-access-routes.ts';
import { registerMcpGatewayRoute } from './routes/mcp-gateway-route.ts';
import { registerMcpServerRoutes } from './routes/mcp-server-routes.ts';
import { registerMessagesRoute } from './routes/messages-route.ts';
import { registerMetricsRoute } from './routes/metrics-route.ts';
import { registerModelRoutes } from './routes/model-routes.ts';
import { registerRerankRoute } from './routes/rerank-route.ts';
import { registerResponsesRoute } from './routes/responses-route.ts';
import { registerRoutingDiagnosticsRoutes } from './routes/routing-diagnostics-routes.ts';
import { registerSettingsRoutes } from './routes/settings-routes.ts';
import { registerSpeechRoute } from './routes/speech-route.ts';
import { registerSpendRoutes } from './routes/spend-routes.ts';
import { registerTierPolicyRoutes } from './routes/tier-policy-routes.ts';
import { registerTranscriptionsRoute } from './routes/transcriptions-route.ts';
import { validatorCompiler } from './validator-compiler.ts';

export const VERSION = '0.1.0';

export async function buildApp(deps: AppDependencies): Promise<App> {
  const { general_settings: general } = deps.config;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request is written by the metrics plugin instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: general.max_request_body_bytes,
    // request.ip (the failed-authentication throttle's address) comes from X-Forwarded-For only when
    // the peer is one of these proxies (proxy-addr semantics); nobody is trusted by default.
    trustProxy: general.trusted_proxies.length > 0 ? [...general.trusted_proxies] : false,
    genReqId: requestId,
    // Longer than common load-balancer idle timeouts, so the balancer closes idle connections first.
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
    // A malformed URL (bad percent-encoding, an over-long parameter) gets the OpenAI envelope too.
    frameworkErrors: (error, request, reply) =>
      sendGatewayError(reply, toGatewayError(error, request, general.max_request_body_bytes)),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.decorate('openStreams', new OpenStreams());
  // Response schemas document the API; they are not compiled into serializers. Compiling one per route
  // and status (fast-json-stringify, with Ajv for every anyOf) cost ~30 MB of heap at start, and no hot
  // answer uses one: chat answers are written as the upstream's JSON text. Views build explicit objects.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  await app.register(errorHandlerPlugin);
  await app.register(bodyReadDeadlinePlugin, { timeoutMs: general.body_read_timeout_seconds * 1000 });
  await app.register(requestMetricsPlugin, { metrics: deps.metrics, logRequests: general.request_logging });
  await app.register(authenticationPlugin, { authenticator: deps.authenticator, clock: deps.clock });
  await app.register(bodyAdmissionPlugin, {
    shareBytes: general.max_concurrent_body_bytes_per_key,
    unknownLengthBytes: general.max_request_body_bytes,
  });
  await app.register(adminScopePlugin, { organizationOf: deps.organizationOf });
  await app.register(adminNoStorePlugin);
  await app.register(openApiPlugin, { version: VERSION });

  registerHealthRoutes(app, deps);
  registerMetricsRoute(app, deps);
  registerRoutingDiagnosticsRoutes(app, deps);
  registerIdentityRoutes(app, deps);
  registerAuditRoutes(app, deps);
  registerModelRoutes(app, deps);
  registerChatCompletionsRoute(app, deps);
  registerCompletionsRoute(app, deps);
  registerResponsesRoute(app, deps);
  registerMessagesRoute(app, deps);
  registerEmbeddingsRoute(app, deps);
  registerImagesRoute(app, deps);
  registerRerankRoute(app, deps);
  registerSpeechRoute(app, deps);
  registerTranscriptionsRoute(app, deps);
  registerFileRoutes(app, deps);
  registerBatchRoutes(app, deps);
  registerMcpGatewayRoute(app, deps);
  registerMcpServerRoutes(app, deps);
  registerMcpAccessRoutes(app, deps);
  registerLiteLlmManagementRoutes(app, deps);
  registerSpendRoutes(app, deps);
  registerCacheRoutes(app, deps);
  registerTierPolicyRoutes(app, deps);
  registerSettingsRoutes(app, deps);
  registerConsoleRoutes(app, deps);
  registerExportRoutes(app, deps);
  await registerConsoleStatic(app, {
    enabled: general.console_enabled,
    logger: deps.logger,
    ...(deps.consoleDistDir ? { distDir: deps.consoleDistDir } : {}),
  });
  return app;
}

/** Keeps a caller's sane x-request-id so traces join up; otherwise a fresh UUID. */
function requestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
}
