/** OpenAPI generated from the route schemas: /openapi.json, Swagger UI at /docs, ReDoc at /redoc. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const redocPage = `<!doctype html>
<html><head><title>Switchboard API</title><meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="https://cdn.redoc.ly/redoc/latest/bundles/redoc.standalone.js"></script></body></html>`;

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
    await app.register(swaggerUi, { routePrefix: '/docs' });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    app.get('/redoc', { schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/html').send(redocPage),
    );
  },
  { name: 'switchboard-openapi' },
);
