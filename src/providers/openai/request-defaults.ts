/**
 * Request defaults a deployment sets in its params, as LiteLLM reads them from `litellm_params`:
 * sent when the caller does not set the field, never over the caller's value (issue 10: temperature,
 * max_tokens and seed in litellm_params were dropped silently).
 */

/** The OpenAI request fields a deployment may give a default for. */
export const REQUEST_DEFAULT_PARAMS = [
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'seed',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'n',
  'user',
  'response_format',
  'reasoning_effort',
] as const;

/** The defaults present in `params`, frozen once per deployment; undefined when there are none. */
export function requestDefaults(
  params: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> | undefined {
  const defaults: Record<string, unknown> = {};
  for (const name of REQUEST_DEFAULT_PARAMS) if (params[name] !== undefined) defaults[name] = params[name];
  return Object.keys(defaults).length > 0 ? Object.freeze(defaults) : undefined;
}

/**
 * The request with the defaults it does not set. A caller's max_completion_tokens stands in for a
 * max_tokens default and the other way round (OpenAI refuses both in one request).
 */
export function withDefaults<T extends Record<string, unknown>>(
  request: T,
  defaults: Readonly<Record<string, unknown>> | undefined,
): T {
  if (defaults === undefined) return request;
  const merged: Record<string, unknown> = { ...defaults, ...request };
  for (const [name, twin] of [
    ['max_tokens', 'max_completion_tokens'],
    ['max_completion_tokens', 'max_tokens'],
  ] as const) {
    if (request[name] === undefined && request[twin] !== undefined && defaults[name] !== undefined)
      delete merged[name];
  }
  return merged as T;
}
