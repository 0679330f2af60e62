/**
 * Authentication hooks: `authenticateCaller` (proxy routes and /mcp) resolves `request.caller` from the
 * bearer key before the body is read (`authenticateCallerOrApiKey` also reads `x-api-key`, for
 * /v1/messages); `authenticateAdmin` (/ui/api) resolves `request.adminActor`. On all of them an
 * unknown key counts against its client address, and past the limit is answered 429 instead of 401
 * (identity/auth-failure-throttle.ts); a valid key is never throttled.
 */
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Caller } from '../../canonical/caller.ts';
import { AuthFailureThrottle } from '../../identity/auth-failure-throttle.ts';
import type { AdminActor, Authenticator } from '../../identity/authenticator.ts';
import type { Clock } from '../../lib/clock.ts';
import { ErrorCode, errors } from '../../lib/error-catalogue.ts';
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
    const throttle = new AuthFailureThrottle(options.clock);
    /** The error to answer for a failed authentication: an unknown key counts against its address. */
    const failure = (request: FastifyRequest, error: unknown): unknown => {
      if (!(error instanceof GatewayError) || error.code !== ErrorCode.invalidApiKey) return error;
      const retryAfter = throttle.failed(request.ip);
      if (retryAfter === 0) return error;
      request.log.warn({ client_address: request.ip }, 'repeated failed authentications: answering 429');
      return errors.tooManyFailedAuthentications(retryAfter);
    };
    // Decorated with null so every request object keeps one shape (Fastify's advice for speed).
    app.decorateRequest('caller', null as never);
    app.decorateRequest('adminActor', null as never);
    app.decorate('authenticateCaller', async (request: FastifyRequest) => {
      try {
        request.caller = await authenticator.authenticate(request.headers.authorization);
      } catch (error) {
        throw failure(request, error);
      }
    });
    app.decorate('authenticateCallerOrApiKey', async (request: FastifyRequest) => {
      const apiKey = request.headers['x-api-key'];
      const authorization =
        request.headers.authorization ??
        (typeof apiKey === 'string' && apiKey ? `Bearer ${apiKey}` : undefined);
      try {
        request.caller = await authenticator.authenticate(authorization);
      } catch (error) {
        throw failure(request, error);
      }
    });
    app.decorate('authenticateAdmin', async (request: FastifyRequest) => {
      try {
        request.adminActor = await authenticator.authenticateAdmin(request.headers.authorization);
      } catch (error) {
        throw failure(request, error);
      }
    });
  },
  { name: 'switchboard-authentication' },
);
