/** Converts identity limit fields to and from their columns (maps are stored as JSON text). */
import type { LimitFields } from '../../../canonical/caller.ts';
import type { LimitColumns } from '../tables.ts';

export function limitsFromColumns(row: LimitColumns): LimitFields {
  return {
    rpm_limit: row.rpm_limit,
    tpm_limit: row.tpm_limit,
    rph_limit: row.rph_limit,
    rpd_limit: row.rpd_limit,
    tpd_limit: row.tpd_limit,
    output_tpm_limit: row.output_tpm_limit,
    model_rpm_limit: parseJson(row.model_rpm_limit),
    model_tpm_limit: parseJson(row.model_tpm_limit),
    model_output_tpm_limit: parseJson(row.model_output_tpm_limit),
    max_budget: row.max_budget,
    soft_budget: row.soft_budget,
    budget_duration: row.budget_duration,
  };
}

/** Only the fields present in `limits` become columns, so an update leaves the others alone. */
export function columnsFromLimits(limits: Partial<LimitFields>): Partial<LimitColumns> {
  const columns: Partial<LimitColumns> = {};
  for (const name of [
    'rpm_limit',
    'tpm_limit',
    'rph_limit',
    'rpd_limit',
    'tpd_limit',
    'output_tpm_limit',
    'max_budget',
    'soft_budget',
  ] as const) {
    if (limits[name] !== undefined) columns[name] = limits[name];
  }
  if (limits.budget_duration !== undefined) columns.budget_duration = limits.budget_duration;
  for (const name of ['model_rpm_limit', 'model_tpm_limit', 'model_output_tpm_limit'] as const) {
    const value = limits[name];
    if (value !== undefined) columns[name] = value === null ? null : JSON.stringify(value);
  }
  return columns;
}

/** Stored JSON, or null when the column is empty or unreadable: one bad row never breaks a list. */
export function parseJson<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/** A nullable boolean as its 0/1 column (integers keep SQLite and PostgreSQL identical), and back. */
export function flagColumn(value: boolean | null): number | null {
  return value === null ? null : value ? 1 : 0;
}

export function flagFromColumn(value: number | null): boolean | null {
  return value === null ? null : Number(value) === 1;
}

export function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

export interface Page<T> {
  items: T[];
  total: number;
}

export interface PageRequest {
  limit: number;
  offset: number;
}
