/** Picks the identity limit fields out of a stored organization, team, user or key. */
import type { LimitFields } from '../canonical/caller.ts';

export function limitsFromRecord(record: LimitFields): LimitFields {
  return Object.freeze({
    rpm_limit: record.rpm_limit,
    tpm_limit: record.tpm_limit,
    rph_limit: record.rph_limit,
    rpd_limit: record.rpd_limit,
    tpd_limit: record.tpd_limit,
    output_tpm_limit: record.output_tpm_limit,
    model_rpm_limit: record.model_rpm_limit,
    model_tpm_limit: record.model_tpm_limit,
    model_output_tpm_limit: record.model_output_tpm_limit,
    max_budget: record.max_budget,
    soft_budget: record.soft_budget,
    budget_duration: record.budget_duration,
  });
}
