/**
 * OpenAPI generated from the route schemas: /openapi.json and Swagger UI at /docs, served from the
 * pinned @fastify/swagger-ui package under a Content-Security-Policy that allows this origin's own
 * scripts only. /redoc redirects there: it used to load an unpinned ReDoc script from a CDN on the
 * origin where the console keeps the admin key (issue 25), and one local reference is enough.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * No third-party origin may run code, style or frame the page; the UI fetches only the document from
 * this origin. `data:` images are the stylesheet's icons.
 */
export const DOCS_CONTENT_SECURITY_POLICY = {
  'default-src': "'none'",
  'script-src': "'self'",
  // The one inline <style> Swagger UI (pinned through @fastify/swagger-ui) writes; the browser test
  // (test/console/api-reference.test.ts) reports any other as a violation.
  'style-src': "'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
  'img-src': "'self' data:",
  'font-src': "'self'",
  'connect-src': "'self'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-ancestors': "'none'",
} as const;

export const openApiPlugin = fp(
  async (app: FastifyInstance, options: { version: string }) => {
    await app.register(swagger, {
      openapi: {
        info: {
          title: 'Switchboard',
          version: options.version,
          description:
            'An OpenAI-compatible AI gateway with keys, rate limits, routing and an MCP tool gateway.',
        },
        components: {
          securitySchemes: {
            apiKey: { type: 'http', scheme: 'bearer', description: 'An API key from POST /ui/api/keys.' },
            anthropicApiKey: {
              type: 'apiKey',
              in: 'header',
              name: 'x-api-key',
              description:
                'The same API key in x-api-key, as the Anthropic SDK sends it (/v1/messages only).',
            },
            masterKey: {
              type: 'http',
              scheme: 'bearer',
              description: "The master key, or an admin user's API key.",
            },
          },
        },
        tags: [
          { name: 'proxy', description: 'OpenAI-compatible model endpoints (API key).' },
          { name: 'admin', description: 'Administration (master key).' },
          { name: 'mcp', description: 'The MCP tool gateway: JSON-RPC 2.0 over Streamable HTTP (API key).' },
          {
            name: 'health',
            description: 'Probes, diagnostics and metrics (no authentication; keep internal).',
          },
        ],
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: { ...DOCS_CONTENT_SECURITY_POLICY } });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    app.get('/redoc', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 301));
  },
  { name: 'switchboard-openapi' },
);
