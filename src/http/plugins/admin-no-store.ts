/**
 * `Cache-Control: no-store` on every admin API answer (/ui/api/*): administrators' data must not sit
 * in a browser or proxy cache. Added per route when the route is declared, so the proxy routes carry
 * no hook at all (the hot path pays nothing).
 */
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';

const noStore: onSendHookHandler = async (_request, reply, payload) => {
  reply.header('cache-control', 'no-store');
  return payload;
};

export const adminNoStorePlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      if (route.url !== '/ui/api' && !route.url.startsWith('/ui/api/')) return;
      route.onSend = [...[route.onSend ?? []].flat(), noStore];
    });
  },
  { name: 'switchboard-admin-no-store' },
);
