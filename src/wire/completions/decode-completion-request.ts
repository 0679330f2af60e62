/**
 * Decodes a legacy completions body into the canonical chat request: the prompt becomes user messages
 * (a list of prompts, one user message each), every other field carries over under its own name (chat
 * shares the legacy names, and an OpenAI-compatible upstream may take more, as on chat), and what the
 * chat model cannot honour is refused with 400 naming the field (spec proxy rules 2 and 3). Nothing is
 * silently dropped (issue 25).
 */
import type { ChatRequest } from '../../canonical/chat-request.ts';
import { errors } from '../../lib/error-catalogue.ts';

/** Fields the translation itself reads; every other field is carried over to the chat request as written. */
const TRANSLATED = new Set(['model', 'prompt', 'max_tokens', 'stream']);

/** Tool calling is chat's: refused here when set (and never carried). */
const TOOL_FIELDS = ['tools', 'tool_choice', 'functions', 'function_call'];

/** Legacy fields with no chat equivalent: 400 when set to anything but their neutral value. */
const REFUSED: ReadonlyArray<readonly [name: string, neutral: (value: unknown) => boolean]> = [
  ['echo', (value) => value === false],
  ['best_of', (value) => value === 1],
  ['logprobs', () => false],
  ['suffix', () => false],
];

export function decodeCompletionRequest(body: unknown): ChatRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw errors.invalidRequest('The body must be a JSON object with model and prompt.');
  const request = body as Record<string, unknown>;
  if (typeof request.model !== 'string' || request.model.length === 0)
    throw errors.invalidRequest(
      'model: must be a non-empty string naming a model from GET /v1/models.',
      'model',
    );
  for (const [name, neutral] of REFUSED) {
    const value = request[name];
    if (value !== undefined && value !== null && !neutral(value))
      throw errors.invalidRequest(
        `${name}: is not supported by /v1/completions on this gateway (it is translated to chat); remove it.`,
        name,
      );
  }
  if (request.messages !== undefined)
    throw errors.invalidRequest(
      'messages: /v1/completions takes a prompt; send messages to /v1/chat/completions.',
      'messages',
    );
  for (const name of TOOL_FIELDS) {
    if (request[name] !== undefined && request[name] !== null)
      throw errors.invalidRequest(
        `${name}: tool calling is not available on /v1/completions; use /v1/chat/completions.`,
        name,
      );
  }
  if (request.stream !== undefined && request.stream !== null && typeof request.stream !== 'boolean')
    throw errors.invalidRequest('stream: must be true or false.', 'stream');
  const maxTokens = request.max_tokens;
  if (maxTokens != null && !(Number.isInteger(maxTokens) && (maxTokens as number) >= 1))
    throw errors.invalidRequest('max_tokens: must be a positive integer.', 'max_tokens');
  const chat: ChatRequest = {
    model: request.model,
    messages: promptOf(request.prompt).map((text) => ({ role: 'user', content: text })),
  };
  if (maxTokens != null) chat.max_tokens = maxTokens as number;
  if (request.stream === true) chat.stream = true;
  const skipped = new Set([...TRANSLATED, ...TOOL_FIELDS, ...REFUSED.map(([name]) => name)]);
  for (const [name, value] of Object.entries(request))
    if (value !== undefined && !skipped.has(name)) chat[name] = value;
  return chat;
}

function promptOf(prompt: unknown): string[] {
  if (typeof prompt === 'string') {
    if (prompt.length === 0) throw errors.invalidRequest('prompt: must not be empty.', 'prompt');
    return [prompt];
  }
  if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((item) => typeof item === 'string')) {
    return prompt as string[];
  }
  throw errors.invalidRequest(
    'prompt: must be a string or a non-empty list of strings (token-id prompts are not supported).',
    'prompt',
  );
}
