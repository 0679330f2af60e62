/**
 * A chat.completion.chunk kept as the upstream's JSON text. It is parsed only when a stage asks for the
 * object, so OpenAI-shaped callers get the upstream's bytes; usage is read from the few chunks that
 * can carry it (found by a key search, since the key cannot appear unescaped inside a JSON string):
 * the top-level `usage`, or Groq's `x_groq.usage` (canonical chunkUsage).
 */
import type { ChatCompletionChunk, StreamChunk } from '../../canonical/chat-chunk.ts';
import { chunkUsage, type Usage } from '../../canonical/usage.ts';

export class RawChunk implements StreamChunk {
  readonly json: string;
  readonly usage: Usage | undefined;
  readonly usageOnly: boolean;
  private parsed: ChatCompletionChunk | undefined;

  constructor(json: string) {
    this.json = json;
    if (json.includes('"usage":{') || json.includes('"usage": {')) {
      this.parsed = JSON.parse(json) as ChatCompletionChunk;
      this.usage = chunkUsage(this.parsed);
      this.usageOnly =
        this.usage !== undefined && Array.isArray(this.parsed.choices) && this.parsed.choices.length === 0;
    } else {
      this.usage = undefined;
      this.usageOnly = false;
    }
  }

  get chunk(): ChatCompletionChunk {
    this.parsed ??= JSON.parse(this.json) as ChatCompletionChunk;
    return this.parsed;
  }
}
