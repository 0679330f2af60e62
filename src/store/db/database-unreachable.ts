/**
 * The database could not be opened or migrated at start: one line naming the setting that names it
 * (`general_settings.database_url`, or `telemetry_database_url` for spend's own database: issue 25), its
 * host (never its password) and the reason, instead of a stack trace (issue 10).
 */
export class DatabaseUnreachableError extends Error {
  constructor(url: string, cause: unknown, setting = 'general_settings.database_url') {
    const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    super(`cannot use the database at ${setting} (${displayUrl(url)}): ${reason}`, { cause });
    this.name = 'DatabaseUnreachableError';
  }
}

/** The URL without its password; a SQLite path as it is. */
export function displayUrl(url: string): string {
  if (!/^postgres(ql)?:\/\//.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'an unparsable PostgreSQL URL';
  }
}
