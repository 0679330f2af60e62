/**
 * Stream usage read from OpenAI-wire chunks (docs/limits.md, What is counted): the top-level `usage`,
 * or Groq's `x_groq.usage`. The fixtures (test/fakes/groq/) are Groq streams in its wire shape: one
 * reporting usage only in the finish chunk's `x_groq.usage` (Groq's default), one asked with
 * `stream_options.include_usage` that repeats the same report in a final usage-only chunk.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Usage } from '../../canonical/usage.ts';
import { openAiChunks } from './openai-stream.ts';
import { RawChunk } from './raw-chunk.ts';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fakes/groq/${name}`, import.meta.url));

/** Each chunk's usage, and the stream's as the text pipeline takes it (the last report). */
async function usages(name: string): Promise<{ reports: Usage[]; last: Usage | undefined }> {
  const reports: Usage[] = [];
  async function* body() {
    yield fixture(name);
  }
  for await (const chunk of openAiChunks(body())) if (chunk.usage) reports.push(chunk.usage);
  return { reports, last: reports.at(-1) };
}

describe('stream usage in a vendor object', () => {
  it("reads Groq's x_groq.usage when the chunk has no top-level usage", async () => {
    const { reports, last } = await usages('stream-x-groq-usage.sse');
    expect(reports).toHaveLength(1);
    expect(last).toMatchObject({ prompt_tokens: 18, completion_tokens: 439, total_tokens: 457 });
  });

  it('a report repeated in x_groq.usage and usage counts once', async () => {
    const { reports, last } = await usages('stream-usage-twice.sse');
    // Two chunks report it (the finish chunk, then the usage-only chunk carrying both copies): the
    // stream's usage is the last report, never a sum.
    expect(reports).toHaveLength(2);
    expect(last).toMatchObject({ completion_tokens: 439, total_tokens: 457 });
  });

  it('prefers the top-level usage when a chunk carries both, and ignores an invalid vendor copy', () => {
    const both = new RawChunk(
      JSON.stringify({
        choices: [],
        usage: { prompt_tokens: 1, completion_tokens: 2 },
        x_groq: { usage: { prompt_tokens: 1, completion_tokens: 3 } },
      }),
    );
    expect(both.usage).toMatchObject({ completion_tokens: 2 });
    expect(both.usageOnly).toBe(true);
    const invalid = new RawChunk(
      JSON.stringify({ choices: [], x_groq: { usage: { prompt_tokens: 1, completion_tokens: -1 } } }),
    );
    expect(invalid.usage).toBeUndefined();
  });
});
