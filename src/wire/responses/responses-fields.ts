/**
 * What the Responses decoder does with each top-level field, so none is silently dropped (issue 25:
 * `max_tokens: 5` was answered without a cap): a field is translated to chat, carried over under the
 * same name (chat has it with the same meaning), accepted only at a value that asks for nothing the
 * chat translation cannot give, or refused with a 400 naming it; a field of another API gets a 400
 * that names the Responses field to use instead.
 */
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { errors } from '../../lib/error-catalogue.ts';

type Json = Record<string, unknown>;

/** Decoded by decode-responses-request.ts (and its stateless refusals). */
const TRANSLATED = new Set([
  'model',
  'input',
  'instructions',
  'stream',
  'max_output_tokens',
  'temperature',
  'top_p',
  'parallel_tool_calls',
  'user',
  'reasoning',
  'text',
  'tools',
  'tool_choice',
  'metadata',
  'previous_response_id',
  'store',
  'background',
  'conversation',
  'prompt',
]);

/** Chat completions takes these with the same meaning and values: they reach the upstream as written. */
const CARRIED = ['service_tier', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier'] as const;

/**
 * `include` values that ask for parts of output items a translated answer never has (it holds only
 * messages and function calls), so they are satisfied as they stand.
 */
const VACUOUS_INCLUDES = new Set([
  'reasoning.encrypted_content',
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'code_interpreter_call.outputs',
  'computer_call_output.output.image_url',
  'message.input_image.image_url',
]);

/** Responses fields accepted only at a value that asks for nothing (null is always such a value). */
const NEUTRAL_ONLY: ReadonlyArray<
  readonly [name: string, neutral: (value: unknown) => boolean, why: string]
> = [
  ['truncation', (value) => value === 'disabled', "the gateway never truncates input; send 'disabled'"],
  ['max_tool_calls', () => false, 'hosted tools are not available on this gateway'],
  ['top_logprobs', (value) => value === 0, 'log probabilities are not returned by this gateway'],
  ['context_management', () => false, 'the gateway keeps no context to compact'],
  ['prompt_cache_options', () => false, 'send prompt_cache_key or prompt_cache_retention instead'],
  [
    'stream_options',
    (value) =>
      isObject(value) &&
      Object.entries(value).every(([key, on]) => key === 'include_obfuscation' && on === false),
    'the gateway sends no obfuscation fields; send {"include_obfuscation": false} or leave it out',
  ],
];

/** Names from the chat and other APIs, with the Responses field that does the same. */
const RENAMED: Readonly<Record<string, string>> = {
  max_tokens: 'use max_output_tokens on /v1/responses',
  max_completion_tokens: 'use max_output_tokens on /v1/responses',
  messages: 'send the conversation as input',
  response_format: 'use text.format on /v1/responses',
  reasoning_effort: 'use reasoning.effort on /v1/responses',
  stop: 'stop sequences are not part of the Responses API; use /v1/chat/completions',
  n: 'one answer per request on /v1/responses; use /v1/chat/completions for n',
};

/** Refuses what cannot be honoured; returns the fields carried over to the chat request as they are. */
export function checkResponsesFields(body: Json): Partial<ChatRequest> {
  const carried: Partial<ChatRequest> = {};
  for (const [name, value] of Object.entries(body)) {
    if (TRANSLATED.has(name)) continue;
    if ((CARRIED as readonly string[]).includes(name)) {
      if (value !== undefined && value !== null) carried[name] = value;
      continue;
    }
    if (name === 'include') {
      checkInclude(value);
      continue;
    }
    const neutral = NEUTRAL_ONLY.find(([known]) => known === name);
    if (neutral) {
      if (value !== undefined && value !== null && !neutral[1](value))
        throw errors.invalidRequest(
          `${name}: not supported by this gateway's /v1/responses; ${neutral[2]}.`,
          name,
        );
      continue;
    }
    const hint = RENAMED[name];
    throw errors.invalidRequest(
      hint
        ? `${name}: is not a Responses API field; ${hint}.`
        : `${name}: is not a field this gateway's /v1/responses knows; remove it (unknown fields are refused rather than ignored).`,
      name,
    );
  }
  return carried;
}

function checkInclude(value: unknown): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) throw errors.invalidRequest('include: must be a list of strings.', 'include');
  value.forEach((item, index) => {
    if (typeof item !== 'string' || !VACUOUS_INCLUDES.has(item))
      throw errors.invalidRequest(
        `include[${index}]: ${JSON.stringify(item)} cannot be returned by this gateway (its answers hold messages and function calls only).`,
        `include[${index}]`,
      );
  });
}

/** The keys of `reasoning` and `text`: each is translated, or refused by name. */
export function checkNestedSettings(body: Json): void {
  const nested = [
    ['reasoning', ['effort'], '{"effort": "low"}'],
    ['text', ['format', 'verbosity'], '{"format": {"type": "text"}}'],
  ] as const;
  for (const [name, known, example] of nested) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    if (!isObject(value)) throw errors.invalidRequest(`${name}: must be an object such as ${example}.`, name);
    for (const [key, setting] of Object.entries(value)) {
      if ((known as readonly string[]).includes(key) || setting === null || setting === undefined) continue;
      const summary = name === 'reasoning' && (key === 'summary' || key === 'generate_summary');
      throw errors.invalidRequest(
        summary
          ? `reasoning.${key}: reasoning summaries are not returned by this gateway; leave it out.`
          : `${name}.${key}: is not supported by this gateway's /v1/responses; remove it.`,
        `${name}.${key}`,
      );
    }
  }
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
