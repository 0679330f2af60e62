/**
 * The fault suite's report: its global set-up clears old records before the run, and its reporter (after
 * the run, knowing whether it passed) renders them as a Markdown table in
 * `.fault-report/reliability-table.md`. With UPDATE_RELIABILITY_DOC=1 the table also replaces the one
 * between the markers in docs/reliability.md, but only after a run of every fault file that passed, so
 * the doc never holds a failed run's figures or one file's rows alone.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { faultReportDir, type ScenarioResult } from './fault-report.ts';

const START = '<!-- fault-table:start -->';
const END = '<!-- fault-table:end -->';

export function setup(): void {
  rmSync(faultReportDir(), { recursive: true, force: true });
  mkdirSync(faultReportDir(), { recursive: true });
}

/** Renders the records; `complete` when every fault file ran and passed (the doc is updated only then). */
export function renderRecords(complete: boolean): void {
  const dir = faultReportDir();
  if (!existsSync(dir)) return;
  const results = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as ScenarioResult)
    .sort((a, b) => a.group.localeCompare(b.group) || a.scenario.localeCompare(b.scenario));
  if (results.length === 0) return;
  const table = renderTable(results);
  writeFileSync(join(dir, 'reliability-table.md'), `${table}\n`);
  if (process.env.UPDATE_RELIABILITY_DOC !== '1') return;
  if (complete) replaceInDoc(table);
  else
    process.stderr.write(
      'docs/reliability.md not updated: the table is rewritten only after a run of every fault file that passed\n',
    );
}

export function renderTable(results: readonly ScenarioResult[]): string {
  const rows = results.map((r) =>
    [
      r.group,
      r.scenario,
      r.mode,
      `${r.served}/${r.requests}`,
      formatErrors(r.errorsByStatus),
      r.recoverySeconds === null ? '—' : `${r.recoverySeconds.toFixed(1)} s`,
      r.readinessSeconds === null ? '—' : `${r.readinessSeconds.toFixed(1)} s`,
      r.spend,
      r.notes ?? '',
    ]
      .map((cell) => cell.replaceAll('|', '\\|'))
      .join(' | '),
  );
  return [
    '| Dependency | Fault | Mode | Served | Errors by status | Recovery | Readiness | Spend | Notes |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

function formatErrors(errors: Record<string, number>): string {
  const entries = Object.entries(errors).filter(([, count]) => count > 0);
  return entries.length === 0 ? 'none' : entries.map(([status, count]) => `${status}×${count}`).join(', ');
}

function replaceInDoc(table: string): void {
  const path = join(process.cwd(), 'docs', 'reliability.md');
  const doc = readFileSync(path, 'utf8');
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/reliability.md lacks the ${START} … ${END} markers`);
  writeFileSync(path, `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`);
}
