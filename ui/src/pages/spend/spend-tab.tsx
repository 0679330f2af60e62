/**
 * The Spend tab (/ui/spend): filters kept in the URL, applied to the summary, the records and the CSV
 * export alike; a filter the gateway refuses is marked on its field.
 */
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useSession } from '../../auth/session.tsx';
import { fieldErrors } from '../../components/field.tsx';
import { ExportCsvButton } from './export-csv-button.tsx';
import { FilterForm } from './filter-form.tsx';
import { recordsQuery, spendFilterSpecs, summaryQuery } from './spend-filters.ts';
import { SpendRecords } from './spend-records.tsx';
import { SpendSummary } from './spend-summary.tsx';
import type { SpendLogsAnswer, SpendSummaryAnswer } from './spend-types.ts';
import { useUrlFilters } from './url-filters.ts';

/** Records per page: enough to scan, small enough to answer fast. */
export const SPEND_PAGE_SIZE = 50;
const filterNames = spendFilterSpecs.map((spec) => spec.name);

export function SpendTab() {
  const { api } = useSession();
  const [filters, applyFilters] = useUrlFilters(spendFilterSpecs);
  const summaryParams = summaryQuery(filters);
  const recordsParams = recordsQuery(filters);
  const summary = useQuery({
    queryKey: ['spend', 'summary', summaryParams],
    queryFn: () => api.get<SpendSummaryAnswer>('/spend/summary', summaryParams),
  });
  const records = useInfiniteQuery({
    queryKey: ['spend', 'logs', recordsParams],
    queryFn: ({ pageParam }) =>
      api.get<SpendLogsAnswer>('/spend/logs', {
        ...recordsParams,
        limit: SPEND_PAGE_SIZE,
        cursor: pageParam,
      }),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
  });
  // A refusal that names a filter is shown on that filter; the section that got it only points there.
  const summaryRefusal = fieldErrors(summary.error, filterNames).field;
  const recordsRefusal = fieldErrors(records.error, filterNames).field;
  const refusals = { ...recordsRefusal, ...summaryRefusal };
  return (
    <>
      <FilterForm
        label="Spend filters"
        specs={spendFilterSpecs}
        values={filters}
        onApply={applyFilters}
        errors={refusals}
      />
      <section aria-labelledby="spend-summary-heading" className="spend-section">
        <h2 id="spend-summary-heading">Summary</h2>
        <SpendSummary query={summary} filterRefused={Object.keys(summaryRefusal).length > 0} />
      </section>
      <section aria-labelledby="spend-records-heading" className="spend-section">
        <div className="section-header">
          <h2 id="spend-records-heading">Records</h2>
          <ExportCsvButton path="/spend/logs/export" query={recordsParams} fileStem="spend-records" />
        </div>
        <SpendRecords query={records} filterRefused={Object.keys(recordsRefusal).length > 0} />
      </section>
    </>
  );
}
