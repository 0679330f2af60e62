/**
 * The identity limit fields accepted by the admin API (spec "Identity rate-limit fields" and "Output
 * tokens per minute"): the TypeBox schemas give structure and the OpenAPI description; `checkModelMaps`
 * enforces what JSON Schema cannot (UTF-8 byte length of model ids, stored JSON size).
 */
import Type from 'typebox';
import type { LimitFields } from '../canonical/caller.ts';
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

function modelIdProblem(id: string): string | undefined {
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
