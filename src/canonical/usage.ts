/** Token usage in the chat-completions shape, and helpers that read it safely from untrusted JSON. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  completion_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
}

/** Returns a Usage when `value` holds valid non-negative integer counts, otherwise undefined. */
export function readUsage(value: unknown): Usage | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  const prompt = record.prompt_tokens;
  const completion = record.completion_tokens;
  if (!isCount(prompt) || !isCount(completion)) return undefined;
  const total = isCount(record.total_tokens) ? record.total_tokens : prompt + completion;
  return { ...(record as object), prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}

/**
 * The usage a chat.completion.chunk reports: the top-level `usage` (OpenAI), else `x_groq.usage`, where
 * Groq puts a stream's usage. A chunk carrying both is one report (the top-level one is read), and a
 * stream's last report replaces earlier ones, so copies never add up.
 */
export function chunkUsage(chunk: unknown): Usage | undefined {
  if (chunk === null || typeof chunk !== 'object') return undefined;
  const { usage, x_groq: groq } = chunk as { usage?: unknown; x_groq?: { usage?: unknown } | null };
  return readUsage(usage) ?? readUsage(groq?.usage);
}

/** A count read from untrusted JSON (tokens, units): a non-negative integer. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
