/**
 * Authentication hooks: `authenticateCaller` (proxy routes and /mcp) resolves `request.caller` from the
 * bearer key before the body is read (`authenticateCallerOrApiKey` also reads `x-api-key`, for /v1/messages); `authenticateAdmin` (/ui/api) resolves `request.adminActor`.
 */
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Caller } from '../../canonical/caller.ts';
import { AdminAuthThrottle } from '../../identity/admin-auth-throttle.ts';
import type { AdminActor, Authenticator } from '../../identity/authenticator.ts';
import type { Clock } from '../../lib/clock.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { GatewayError } from '../../lib/gateway-error.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
    adminActor: AdminActor;
  }
  interface FastifyInstance {
    authenticateCaller: onRequestAsyncHookHandler;
    /** As authenticateCaller, also taking the key from `x-api-key` (the Anthropic SDK sends it there). */
    authenticateCallerOrApiKey: onRequestAsyncHookHandler;
    authenticateAdmin: onRequestAsyncHookHandler;
  }
}

export const authenticationPlugin = fp(
  async (app: FastifyInstance, options: { authenticator: Authenticator; clock: Clock }) => {
    const { authenticator } = options;
    const throttle = new AdminAuthThrottle(options.clock);
    // Decorated with null so every request object keeps one shape (Fastify's advice for speed).
    app.decorateRequest('caller', null as never);
    app.decorateRequest('adminActor', null as never);
    app.decorate('authenticateCaller', async (request: FastifyRequest) => {
      request.caller = await authenticator.authenticate(request.headers.authorization);
    });
    app.decorate('authenticateCallerOrApiKey', async (request: FastifyRequest) => {
      const apiKey = request.headers['x-api-key'];
      const authorization =
        request.headers.authorization ??
        (typeof apiKey === 'string' && apiKey ? `Bearer ${apiKey}` : undefined);
      request.caller = await authenticator.authenticate(authorization);
    });
    app.decorate('authenticateAdmin', async (request: FastifyRequest) => {
      const retryAfter = throttle.retryAfterSeconds(request.ip);
      if (retryAfter > 0) throw errors.tooManyFailedAuthentications(retryAfter);
      try {
        request.adminActor = await authenticator.authenticateAdmin(request.headers.authorization);
      } catch (error) {
        if (error instanceof GatewayError && error.status === 401) throttle.failed(request.ip);
        throw error;
      }
    });
  },
  { name: 'switchboard-authentication' },
);
