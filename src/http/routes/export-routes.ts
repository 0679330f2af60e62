/**
 * CSV exports of the spend records and the audit log (GET /ui/api/spend/logs/export and
 * /ui/api/audit/export), with the filters of their list routes. Streamed page by page through the
 * lists' cursors, so the table never sits in memory; stopped at EXPORT_ROW_CAP rows (sent as the
 * X-Export-Row-Cap header, so a client can tell a file cut at the cap). The filters are
 * checked on the first page, before a byte is sent, so a bad one is still a 400 naming it.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { SpendLogsPage } from '../../accounting/spend-queries.ts';
import { type CsvValue, csvRow } from '../../lib/csv-row.ts';
import { type AuditRecord, decodeAuditCursor } from '../../store/db/repositories/audit-repository.ts';
import type { App, AppDependencies } from '../app-types.ts';
import { adminSecurity, errorResponses } from '../schemas/common-schemas.ts';
import { SpendLogsQuery, SpendLogView, spendLogsView } from '../schemas/spend-views.ts';
import { AuditQuery, auditFilter } from './audit-routes.ts';

export const EXPORT_ROW_CAP = 100_000;
const PAGE_SIZE = 500;

const SPEND_COLUMNS = Object.keys(SpendLogView.properties) as Array<keyof typeof SpendLogView.properties>;
type SpendLogRow = ReturnType<typeof spendLogsView>['data'][number];
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
        exposeHeadRoute: false, // a HEAD would read and discard the whole export
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
        const next = async (cursor: string) =>
          spendPage(await spend.logs({ ...request.query, cursor, limit: PAGE_SIZE }));
        const cells = (row: SpendLogRow) => SPEND_COLUMNS.map((column) => row[column] as CsvValue);
        return sendCsv(reply, name, pagedCsv(SPEND_COLUMNS, spendPage(first), next, cells));
      },
    );

  app.get(
    '/ui/api/audit/export',
    {
      onRequest,
      exposeHeadRoute: false,
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
      const next = async (cursor: string) =>
        auditPage(await audit.list(filter, { limit: PAGE_SIZE, cursor: decodeAuditCursor(cursor) }));
      const cells = (record: AuditRecord) => AUDIT_COLUMNS.map((column) => auditCell(record, column));
      return sendCsv(reply, name, pagedCsv(AUDIT_COLUMNS, auditPage(first), next, cells));
    },
  );
}

/** Headers first (the cap among them), then the rows as they are read; the reply is returned so Fastify waits for it. */
function sendCsv(reply: FastifyReply, name: string, rows: AsyncGenerator<string>): FastifyReply {
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', `attachment; filename="${name}"`);
  reply.header('x-export-row-cap', String(EXPORT_ROW_CAP));
  return reply.send(Readable.from(rows));
}

/** One page of a list, as the CSV writer reads it. */
interface CsvPage<Row> {
  rows: readonly Row[];
  nextCursor: string | null;
}

/** One chunk per page: the header, then the rows of each page until the cap or the last page. */
async function* pagedCsv<Row>(
  columns: readonly string[],
  first: CsvPage<Row>,
  next: (cursor: string) => Promise<CsvPage<Row>>,
  cells: (row: Row) => CsvValue[],
): AsyncGenerator<string> {
  yield csvRow(columns);
  let page = first;
  let written = 0;
  for (;;) {
    const rows = page.rows.slice(0, EXPORT_ROW_CAP - written);
    written += rows.length;
    yield rows.map((row) => csvRow(cells(row))).join('');
    if (page.nextCursor === null || written >= EXPORT_ROW_CAP) return;
    page = await next(page.nextCursor);
  }
}

function spendPage(page: SpendLogsPage) {
  return { rows: spendLogsView(page).data, nextCursor: page.nextCursor };
}

function auditPage(page: { items: AuditRecord[]; nextCursor: string | null }): CsvPage<AuditRecord> {
  return { rows: page.items, nextCursor: page.nextCursor };
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
