/**
 * "Export CSV": fetches the export with the API client (the key travels in the Authorization header, never
 * in a URL, so a plain download link cannot be used), then saves it through a temporary object URL.
 */
import { useState } from 'react';
import type { QueryValue } from '../../api/client.ts';
import { useSession } from '../../auth/session.tsx';
import { formatCount } from '../../components/format.ts';
import { errorMessage } from '../../components/query-state.tsx';

/** The gateway stops an export at this many rows (EXPORT_ROW_CAP in src/http/routes/export-routes.ts). */
export const EXPORT_ROW_CAP = 100_000;

type ExportState =
  | { kind: 'idle' }
  | { kind: 'pending' }
  | { kind: 'done'; rows: number; fileName: string }
  | { kind: 'failed'; error: unknown };

export function ExportCsvButton(props: {
  path: string;
  query: Record<string, QueryValue>;
  /** The saved file's name without extension; today's date is added. */
  fileStem: string;
}) {
  const { api } = useSession();
  const [state, setState] = useState<ExportState>({ kind: 'idle' });
  const run = async () => {
    setState({ kind: 'pending' });
    try {
      const csv = await api.text(props.path, props.query);
      const fileName = `${props.fileStem}-${new Date().toISOString().slice(0, 10)}.csv`;
      saveFile(csv, fileName);
      setState({ kind: 'done', rows: dataRows(csv), fileName });
    } catch (error) {
      setState({ kind: 'failed', error });
    }
  };
  return (
    <div className="export">
      <button type="button" className="button-secondary" disabled={state.kind === 'pending'} onClick={run}>
        {state.kind === 'pending' ? 'Exporting…' : 'Export CSV'}
      </button>
      <span role="status" aria-live="polite" className="export-status">
        {state.kind === 'done' ? doneMessage(state.fileName, state.rows) : ''}
      </span>
      {state.kind === 'failed' && (
        <p className="field-error" role="alert">
          Export failed: {errorMessage(state.error)}
        </p>
      )}
    </div>
  );
}

function doneMessage(fileName: string, rows: number): string {
  const saved = `Saved ${fileName} (${formatCount(rows)} ${rows === 1 ? 'row' : 'rows'}).`;
  // The gateway sends no sign of a cut, so a full export is taken as one.
  return rows >= EXPORT_ROW_CAP
    ? `${saved} Exports stop at this many rows: narrow the dates for the rest.`
    : saved;
}

/** Lines after the header row (a quoted field may hold a line break, so this is an estimate for the message). */
function dataRows(csv: string): number {
  return Math.max(0, csv.split('\n').filter((line) => line.trim() !== '').length - 1);
}

/** Saves text as a file: an object URL clicked through a temporary <a download>, then released. */
export function saveFile(text: string, fileName: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  try {
    link.click();
  } finally {
    link.remove();
    // Released after the click's task, once the browser has taken hold of the blob for the download.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}
