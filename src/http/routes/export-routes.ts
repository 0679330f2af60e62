/**
 * CSV exports of the spend records and the audit log (GET /ui/api/spend/logs/export and
 * /ui/api/audit/export), with the filters of their list routes. Streamed page by page through the
 * lists' cursors, so the table never sits in memory; stopped at EXPORT_ROW_CAP rows. The filters are
 * checked on the first page, before a byte is sent, so a bad one is still a 400 naming it.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { SpendLogsPage, SpendQueries } from '../../accounting/spend-queries.ts';
import { type CsvValue, csvRow } from '../../lib/csv-row.ts';
import {
  type AuditFilter,
  type AuditRecord,
  decodeAuditCursor,
} from '../../store/db/repositories/audit-repository.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import { SpendLogsQuery, SpendLogView, spendLogsView } from '../schemas/spend-views.ts';
import { AuditQuery, auditFilter } from './audit-routes.ts';

export const EXPORT_ROW_CAP = 100_000;
const PAGE_SIZE = 500;

const SPEND_COLUMNS = Object.keys(SpendLogView.properties) as Array<keyof typeof SpendLogView.properties>;
const AUDIT_COLUMNS = [
  'audit_id',
  'created_at',
  'actor',
  'actor_key_id',
  'action',
  'target_type',
  'target_id',
  'organization_id',
  'request_id',
  'before',
  'after',
] as const;

const SpendExportQuery = Type.Omit(SpendLogsQuery, ['cursor', 'limit']);
const AuditExportQuery = Type.Omit(AuditQuery, ['cursor', 'limit']);
const CsvAnswer = Type.String({
  description: 'text/csv: a header row, then one row per record (at most 100,000).',
});

export function registerExportRoutes(
  app: App,
  deps: Pick<AppDependencies, 'spend' | 'audit' | 'clock'>,
): void {
  const onRequest = app.authenticateAdmin;
  const common = { tags: ['admin'], security: adminSecurity };
  const { spend, audit, clock } = deps;
  const today = () => new Date(clock.now()).toISOString().slice(0, 10);

  if (spend)
    app.get(
      '/ui/api/spend/logs/export',
      {
        onRequest,
        schema: {
          ...common,
          summary: `The spend records matching the filters of GET /ui/api/spend/logs as CSV, newest first (at most ${EXPORT_ROW_CAP}).`,
          querystring: SpendExportQuery,
          response: { 200: CsvAnswer, ...errorResponses },
        },
      },
      async (request, reply) => {
        const first = await spend.logs({ ...request.query, limit: PAGE_SIZE });
        const { from, to } = first.filters;
        const name = `switchboard-spend-${day(from) ?? 'all'}-${day(to) ?? today()}.csv`;
        return sendCsv(reply, name, spendCsv(spend, request.query, first));
      },
    );

  app.get(
    '/ui/api/audit/export',
    {
      onRequest,
      schema: {
        ...common,
        summary: `The audit entries matching the filters of GET /ui/api/audit as CSV, newest first (at most ${EXPORT_ROW_CAP}).`,
        querystring: AuditExportQuery,
        response: { 200: CsvAnswer, ...errorResponses },
      },
    },
    async (request, reply) => {
      const filter = auditFilter(request.query);
      const first = await audit.list(filter, { limit: PAGE_SIZE });
      const name = `switchboard-audit-${day(filter.from) ?? 'all'}-${day(filter.to) ?? today()}.csv`;
      return sendCsv(reply, name, auditCsv(audit, filter, first));
    },
  );
}

/** Headers first, then the rows as they are read; the reply is returned so Fastify waits for it. */
function sendCsv(reply: FastifyReply, name: string, rows: AsyncGenerator<string>): FastifyReply {
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', `attachment; filename="${name}"`);
  return reply.send(Readable.from(rows));
}

/** One chunk per page: the header, then the rows of each page until the cap or the last page. */
async function* spendCsv(
  spend: SpendQueries,
  query: Type.Static<typeof SpendExportQuery>,
  first: SpendLogsPage,
): AsyncGenerator<string> {
  yield csvRow(SPEND_COLUMNS);
  let page = first;
  let written = 0;
  for (;;) {
    const rows = spendLogsView(page).data.slice(0, EXPORT_ROW_CAP - written);
    written += rows.length;
    yield rows.map((row) => csvRow(SPEND_COLUMNS.map((column) => row[column] as CsvValue))).join('');
    if (page.nextCursor === null || written >= EXPORT_ROW_CAP) return;
    page = await spend.logs({ ...query, cursor: page.nextCursor, limit: PAGE_SIZE });
  }
}

async function* auditCsv(
  audit: AppDependencies['audit'],
  filter: AuditFilter,
  first: { items: AuditRecord[]; nextCursor: string | null },
): AsyncGenerator<string> {
  yield csvRow(AUDIT_COLUMNS);
  let page = first;
  let written = 0;
  for (;;) {
    const rows = page.items.slice(0, EXPORT_ROW_CAP - written);
    written += rows.length;
    yield rows.map((record) => csvRow(AUDIT_COLUMNS.map((column) => auditCell(record, column)))).join('');
    if (page.nextCursor === null || written >= EXPORT_ROW_CAP) return;
    const cursor = decodeAuditCursor(page.nextCursor);
    page = await audit.list(filter, { limit: PAGE_SIZE, cursor });
  }
}

function auditCell(record: AuditRecord, column: (typeof AUDIT_COLUMNS)[number]): CsvValue {
  if (column === 'created_at') return new Date(record.created_at).toISOString();
  if (column === 'before' || column === 'after')
    return record[column] === null ? null : JSON.stringify(record[column]);
  return record[column];
}

/** YYYY-MM-DD of an epoch-ms bound, for the file name. */
function day(epochMs: number | undefined): string | undefined {
  return epochMs === undefined ? undefined : new Date(epochMs).toISOString().slice(0, 10);
}
