/** The spend admin API: GET /ui/api/spend/logs (one row per request) and GET /ui/api/spend/summary (grouped totals). */
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import {
  SpendLogsQuery,
  SpendLogsView,
  SpendSummaryQuery,
  SpendSummaryView,
  spendLogsView,
  spendSummaryView,
} from '../schemas/spend-views.ts';

export function registerSpendRoutes(app: App, deps: Pick<AppDependencies, 'spend'>): void {
  const { spend } = deps;
  if (!spend) return;
  const onRequest = app.authenticateAdmin;
  const common = { tags: ['admin'], security: adminSecurity };

  app.get(
    '/ui/api/spend/logs',
    {
      onRequest,
      schema: {
        ...common,
        summary: 'List spend records, newest first, one per request; page with `next_cursor`.',
        querystring: SpendLogsQuery,
        response: { 200: SpendLogsView, ...errorResponses },
      },
    },
    async (request) => spendLogsView(await spend.logs(request.query)),
  );
  app.get(
    '/ui/api/spend/summary',
    {
      onRequest,
      schema: {
        ...common,
        summary:
          'Spend totals grouped by key, user, team, organization, model or day, from the daily aggregates.',
        querystring: SpendSummaryQuery,
        response: { 200: SpendSummaryView, ...errorResponses },
      },
    },
    async (request) => spendSummaryView(await spend.summary(request.query)),
  );
}
