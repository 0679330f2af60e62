/**
 * Serves the web console (ui/dist) at /ui: hashed assets cached for a year, every other page the
 * single-page app's index.html (never cached), all with security headers. The console's JSON API
 * lives under /ui/api and is not served here. A checkout without a built console still starts: /ui
 * then answers 503 saying how to build it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app-types.ts';

/** The built console, found from this file rather than the working directory. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../ui/dist/', import.meta.url));

/** Recharts writes style attributes, hence 'unsafe-inline' for styles only. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

export const NOT_BUILT_MESSAGE = 'The console is not built: run `npm run build:ui`.\n';

export interface ConsoleStaticOptions {
  /** general_settings.console_enabled: false serves nothing at /ui (404), the API stays. */
  enabled: boolean;
  /** The built console folder (tests point it at an empty folder). */
  distDir?: string;
  logger: { warn(message: string): void };
}

export async function registerConsoleStatic(app: App, options: ConsoleStaticOptions): Promise<void> {
  if (!options.enabled) return;
  const distDir = options.distDir ?? CONSOLE_DIST;
  const indexPath = join(distDir, 'index.html');
  const built = existsSync(indexPath);
  if (!built) options.logger.warn(`console not built (${indexPath} missing): /ui answers 503`);
  // Encapsulated, so the security-header hook runs for the console's routes only.
  await app.register(async (scope: FastifyInstance) => {
    scope.addHook('onRequest', async (_request, reply) => {
      reply.headers(CONSOLE_SECURITY_HEADERS);
    });
    const page = built ? readFileSync(indexPath) : undefined;
    if (page) {
      await scope.register(fastifyStatic, {
        root: join(distDir, 'assets'),
        prefix: '/ui/assets/',
        index: false,
        // Asset names carry a content hash: a changed file is a new name.
        maxAge: 31_536_000_000,
        immutable: true,
      });
    }
    const serve = async (request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?', 1)[0]!;
      // ignoreTrailingSlash makes /ui and /ui/ one route; the app's relative asset URLs need the slash.
      // The query stays: the router writes /ui?window=7d for its index route, and a reload must keep it.
      if (path === '/ui') return reply.redirect(`/ui/${request.url.slice(path.length)}`, 302);
      // An unknown API path is a JSON 404, not the app.
      if (path === '/ui/api' || path.startsWith('/ui/api/')) return reply.callNotFound();
      if (!page) return reply.code(503).type('text/plain; charset=utf-8').send(NOT_BUILT_MESSAGE);
      return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(page);
    };
    const hidden = { schema: { hide: true } };
    scope.get('/ui', hidden, serve);
    scope.get('/ui/*', hidden, serve);
  });
}
