/**
 * The bytes the raw upstream answers with, in the OpenAI chat-completions wire format: one fixed
 * `chat.completion` JSON and the events of a `chat.completion.chunk` stream. Built once at start so
 * the upstream spends its time on HTTP, not on serialization.
 */

export interface StreamPayloadOptions {
  /** Content chunks in the stream (the role chunk and the finish chunk come on top). */
  chunkCount: number;
  /** Append a usage-only chunk before `[DONE]` (the caller sent `stream_options.include_usage`). */
  includeUsage: boolean;
}

const ID = 'chatcmpl-bench0000000000000000000000';
const CREATED = 1_767_225_600;
const MODEL = 'bench-upstream-model';
const FINGERPRINT = 'fp_bench0001';
export const ANSWER_TEXT =
  'The quick brown fox jumps over the lazy dog while the gateway forwards every token as it arrives without waiting for the rest.';
const ANSWER_WORDS = ANSWER_TEXT.split(' ');

export const BENCH_USAGE = {
  prompt_tokens: 57,
  completion_tokens: 24,
  total_tokens: 81,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
} as const;

/** The non-streaming answer, as sent on the wire. */
export function completionJson(): string {
  return JSON.stringify({
    id: ID,
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: ANSWER_TEXT, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: BENCH_USAGE,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  });
}

/** The SSE events of a streamed answer, each a complete `data: …\n\n` frame, `[DONE]` last. */
export function streamEvents(options: StreamPayloadOptions): string[] {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({
      id: ID,
      object: 'chat.completion.chunk',
      created: CREATED,
      model: MODEL,
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
      choices,
      ...(options.includeUsage ? { usage } : {}),
    })}\n\n`;
  const events = [
    chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, finish_reason: null }]),
  ];
  for (let index = 0; index < options.chunkCount; index++) {
    const word = ANSWER_WORDS[index % ANSWER_WORDS.length]!;
    const content = index === 0 ? word : ` ${word}`;
    events.push(chunk([{ index: 0, delta: { content }, logprobs: null, finish_reason: null }]));
  }
  events.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]));
  if (options.includeUsage) events.push(chunk([], BENCH_USAGE));
  events.push('data: [DONE]\n\n');
  return events;
}
