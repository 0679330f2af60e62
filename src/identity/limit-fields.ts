/**
 * The identity limit fields accepted by the admin API (spec "Identity rate-limit fields" and "Output
 * tokens per minute"): the TypeBox schemas give structure and the OpenAPI description; `checkModelMaps`
 * enforces what JSON Schema cannot (UTF-8 byte length of model ids, stored JSON size).
 */
import Type from 'typebox';
import { BUDGET_DURATION_PATTERN, budgetDurationMs, MAX_BUDGET_USD } from '../canonical/budget-window.ts';
import type { BudgetFields, LimitFields } from '../canonical/caller.ts';
import { errors } from '../lib/error-catalogue.ts';
import type { GatewayError } from '../lib/gateway-error.ts';

export const MAX_OUTPUT_TPM = 2_147_483_647;
const MAX_COUNT = Number.MAX_SAFE_INTEGER;
const MAX_MODEL_MAP_ENTRIES = 64;
const MAX_MODEL_ID_BYTES = 256;
const MAX_MODEL_MAP_JSON_BYTES = 32 * 1024;

const Count = Type.Integer({ minimum: 0, maximum: MAX_COUNT });
const OutputTokens = Type.Integer({ minimum: 1, maximum: MAX_OUTPUT_TPM });
const nullable = <T extends Type.TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const modelMap = <T extends Type.TSchema>(value: T) =>
  nullable(Type.Record(Type.String(), value, { maxProperties: MAX_MODEL_MAP_ENTRIES }));

const Usd = Type.Number({ minimum: 0, maximum: MAX_BUDGET_USD, description: 'USD, 0 to 1e12' });

/** Fields every scope (organization, team, user, key) accepts. */
export const scopeLimitProperties = {
  rpm_limit: nullable(Count),
  tpm_limit: nullable(Count),
  rph_limit: nullable(Count),
  rpd_limit: nullable(Count),
  tpd_limit: nullable(Count),
  output_tpm_limit: nullable(OutputTokens),
  model_rpm_limit: modelMap(Count),
  model_tpm_limit: modelMap(Count),
  max_budget: nullable(Usd),
  soft_budget: nullable(Usd),
  budget_duration: nullable(
    Type.String({
      pattern: BUDGET_DURATION_PATTERN,
      description: 'must be Nd (1-365) or Nh (1-8760), e.g. 1d, 7d, 30d, 12h; null for a lifetime budget',
    }),
  ),
};

/** Per-model output-token limits: team and key only. */
export const modelOutputLimitProperty = { model_output_tpm_limit: modelMap(OutputTokens) };

/** In-flight request bound: key only. */
export const parallelLimitProperty = {
  max_parallel_requests: nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
};

const modelMapNames = ['model_rpm_limit', 'model_tpm_limit', 'model_output_tpm_limit'] as const;

/** Checks the model maps present in `body`; returns the first problem as a 400 naming the field. */
export function checkModelMaps(body: Partial<LimitFields>): GatewayError | undefined {
  for (const name of modelMapNames) {
    const map = body[name];
    if (map === undefined || map === null) continue;
    for (const id of Object.keys(map)) {
      const problem = modelIdProblem(id);
      if (problem) return errors.invalidRequest(`${name}: model id ${JSON.stringify(id)} ${problem}.`, name);
    }
    if (Buffer.byteLength(JSON.stringify(map)) > MAX_MODEL_MAP_JSON_BYTES) {
      return errors.invalidRequest(
        `${name}: the map exceeds ${MAX_MODEL_MAP_JSON_BYTES} bytes of JSON.`,
        name,
      );
    }
  }
  return undefined;
}

/**
 * What the schema cannot say about budgets: finite amounts (also when called without the schema),
 * soft_budget at most max_budget when both are sent, and the duration's range; a 400 naming the field.
 */
export function checkBudgets(body: Partial<BudgetFields>): GatewayError | undefined {
  for (const name of ['max_budget', 'soft_budget'] as const) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_BUDGET_USD)
      return errors.invalidRequest(`${name}: must be a number of USD from 0 to 1e12, or null.`, name);
  }
  const { max_budget: max, soft_budget: soft, budget_duration: duration } = body;
  if (typeof max === 'number' && typeof soft === 'number' && soft > max)
    return errors.invalidRequest('soft_budget: must not exceed max_budget.', 'soft_budget');
  if (typeof duration === 'string' && budgetDurationMs(duration) === undefined)
    return errors.invalidRequest(
      'budget_duration: must be Nd (1-365) or Nh (1-8760), e.g. 1d, 7d, 30d; null for a lifetime budget.',
      'budget_duration',
    );
  return undefined;
}

/** Why `id` is not an exact caller-facing model id (also the rule for tier-policy models), if it is not. */
export function modelIdProblem(id: string): string | undefined {
  if (id.length === 0) return 'is empty';
  if (Buffer.byteLength(id) > MAX_MODEL_ID_BYTES) return `exceeds ${MAX_MODEL_ID_BYTES} UTF-8 bytes`;
  if (id !== id.trim()) return 'has leading or trailing spaces';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(id)) return 'contains control characters';
  if (/[*?]/.test(id)) return 'contains a wildcard; use exact callable model ids';
  return undefined;
}

/** `{}` clears a model map just as null does (spec: "null or {} clears"). */
export function normalizeModelMaps<T extends Partial<LimitFields>>(body: T): T {
  const copy = { ...body };
  for (const name of modelMapNames) {
    const map = copy[name];
    if (map && Object.keys(map).length === 0) copy[name] = null;
  }
  return copy;
}
