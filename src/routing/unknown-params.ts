/**
 * Checks a deployment's params against what its provider reads (issue 10: `api_bsae`, a typo, started
 * cleanly and the key meant for a private server went to the public OpenAI URL). An unknown param
 * whose closest known name is an address or a credential is an error; any other is a warning naming
 * the param and the closest known one.
 */
import { closestMatch } from '../lib/closest-match.ts';

/** Params every deployment takes, whatever its provider (read by routing, limits and the pools). */
export const COMMON_PARAMS = [
  'provider',
  'model',
  'api_base',
  'api_key',
  'timeout',
  'stream_timeout',
  'connect_timeout',
  'weight',
  'max_connections',
  'rpm',
  'tpm',
] as const;

/** A misspelling of these would send a request, or a secret, somewhere else. */
const ADDRESS_OR_CREDENTIAL = new Set([
  'api_base',
  'api_key',
  'api_version',
  'organization',
  'azure_ad_token',
  'aws_access_key_id',
  'aws_secret_access_key',
  'aws_session_token',
  'aws_region_name',
]);

export function unknownParamProblems(
  params: Readonly<Record<string, unknown>>,
  providerParams: readonly string[],
  path: string,
): { errors: string[]; warnings: string[] } {
  const known = new Set<string>([...COMMON_PARAMS, ...providerParams]);
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const key of Object.keys(params)) {
    if (known.has(key)) continue;
    const suggestion = closestMatch(key, known);
    if (suggestion && ADDRESS_OR_CREDENTIAL.has(suggestion)) {
      errors.push(
        `${path}.${key}: unknown param (did you mean '${suggestion}'?); a misspelled address or credential is refused`,
      );
    } else {
      warnings.push(
        `${path}.${key}: not used by this provider, ignored${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`,
      );
    }
  }
  return { errors, warnings };
}
