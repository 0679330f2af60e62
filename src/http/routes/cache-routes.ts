/** DELETE /ui/api/cache: purges response-cache entries of one model, one team, both, or all. */
import Type from 'typebox';
import { EntityId } from '../../identity/admin-schemas.ts';
import { errors } from '../../lib/error-catalogue.ts';
import { responseCachePattern } from '../../store/shared/response-cache-keys.ts';
import { SharedStoreUnavailableError } from '../../store/shared/shared-store.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';

const CachePurgeQuery = Type.Object(
  {
    model: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'The public model name callers ask for.' }),
    ),
    team_id: Type.Optional(EntityId),
  },
  { additionalProperties: false },
);

const CachePurgedView = Type.Object({
  deleted: Type.Integer({ description: 'How many cached answers were deleted.' }),
});

export function registerCacheRoutes(app: App, deps: Pick<AppDependencies, 'responseCacheStore'>): void {
  app.delete(
    '/ui/api/cache',
    {
      onRequest: app.authenticateAdmin,
      schema: {
        tags: ['admin'],
        security: adminSecurity,
        summary:
          'Delete cached answers: of one model, of one team, of one model of one team, or all of them (no filter).',
        querystring: CachePurgeQuery,
        response: { 200: CachePurgedView, ...errorResponses },
      },
    },
    async (request) => {
      const pattern = responseCachePattern({ model: request.query.model, team: request.query.team_id });
      try {
        return { deleted: await deps.responseCacheStore.cacheDelete(pattern) };
      } catch (error) {
        if (error instanceof SharedStoreUnavailableError) throw errors.cachePurgeUnavailable();
        throw error;
      }
    },
  );
}
