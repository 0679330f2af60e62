/**
 * OpenAI transcription answers: which format to ask upstream, and reading what comes back.
 *
 * Billing needs the audio's duration or the tokens, which only JSON answers carry; OpenAI's `text`,
 * `srt` and `vtt` answers carry neither, so a caller asking for them would go unbilled. The upstream is
 * therefore asked for JSON and the caller's format is written here (wire/audio's transcript encoder):
 * whisper models (the upstream model name contains `whisper`) are asked for `verbose_json` (its
 * `duration` is billed; its segments make the SRT and WebVTT cues); other models (the
 * gpt-4o-transcribe family, which answers only `json` or `text`) are asked for `json` when the caller
 * wants `text` (its `usage` is billed), and `srt` or `vtt` are passed as asked (OpenAI refuses them
 * for those models itself). A caller's `json` and `verbose_json` are asked as they are and sent as
 * they came.
 */
import type { Transcript, TranscriptionFormat, TranscriptionResult } from '../../canonical/modalities.ts';
import { isCount, type Usage } from '../../canonical/usage.ts';
import type { ResponseHeaders } from '../send-upstream.ts';
import { protocolError } from '../upstream-exchange.ts';

/** The format asked upstream for a caller's `format` on `model` (the upstream model name). */
export function upstreamFormat(model: string, format: TranscriptionFormat): TranscriptionFormat {
  if (format === 'json' || format === 'verbose_json') return format;
  if (/whisper/i.test(model)) return 'verbose_json';
  return format === 'text' ? 'json' : format;
}

/** A json or verbose_json answer sent on as it came, checked, with what it says about billing. */
export function readJsonTranscription(text: string): TranscriptionResult {
  const { billing } = parseAnswer(text);
  return { raw: { contentType: 'application/json', body: text }, ...billing };
}

/** A json or verbose_json answer as a transcript, for the route to write in the caller's format. */
export function readTranscript(text: string): TranscriptionResult {
  const { answer, billing } = parseAnswer(text);
  const transcript: Transcript = { text: answer.text as string };
  if (typeof answer.language === 'string') transcript.language = answer.language;
  if (isSeconds(answer.duration)) transcript.duration = answer.duration;
  if (answer.segments !== undefined) transcript.segments = segmentsOf(answer.segments);
  return { transcript, ...billing };
}

/** Media types a text answer may have: OpenAI sends text/plain for text, srt and vtt alike. */
const TEXT_TYPES = new Set(['text/plain', 'text/vtt', 'application/x-subrip']);

/**
 * The content type of a text, srt or vtt answer: one a transcript can have, else the answer is not a
 * transcript (a proxy's HTML error page with status 200) and is refused as a retryable protocol error.
 */
export function textContentType(headers: ResponseHeaders, format: TranscriptionFormat): string {
  const value = headers['content-type'];
  const type = (Array.isArray(value) ? value[0] : value)?.trim() ?? '';
  const base = type.split(';')[0]!.trim().toLowerCase();
  if (!TEXT_TYPES.has(base)) throw protocolError('the upstream transcription is not text');
  return format === 'vtt' ? 'text/vtt; charset=utf-8' : 'text/plain; charset=utf-8';
}

interface ParsedAnswer {
  answer: Record<string, unknown>;
  billing: Pick<TranscriptionResult, 'usage' | 'units'>;
}

function parseAnswer(text: string): ParsedAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw protocolError('the upstream transcription is not JSON');
  }
  const answer = parsed as Record<string, unknown> | null;
  if (answer === null || typeof answer !== 'object' || typeof answer.text !== 'string')
    throw protocolError('the upstream transcription has no text');
  const billing: ParsedAnswer['billing'] = {};
  const usage = answer.usage as Record<string, unknown> | undefined;
  const tokens = tokenUsage(usage);
  if (tokens) billing.usage = tokens;
  const seconds = isSeconds(answer.duration)
    ? answer.duration
    : usage?.type === 'duration' && isSeconds(usage.seconds)
      ? usage.seconds
      : undefined;
  if (seconds !== undefined) billing.units = { audioSeconds: seconds };
  return { answer, billing };
}

/** verbose_json's segments, checked: each cue needs its times and text. */
function segmentsOf(value: unknown): NonNullable<Transcript['segments']> {
  if (!Array.isArray(value)) throw protocolError('the upstream transcription segments are not a list');
  return value.map((segment: unknown, index) => {
    const item = segment as Record<string, unknown> | null;
    if (
      item === null ||
      typeof item !== 'object' ||
      !isSeconds(item.start) ||
      !isSeconds(item.end) ||
      typeof item.text !== 'string'
    )
      throw protocolError('an upstream transcription segment has no start, end or text');
    return {
      id: typeof item.id === 'number' ? item.id : index,
      start: item.start,
      end: item.end,
      text: item.text,
    };
  });
}

/** gpt-4o-transcribe's `usage` of type tokens as prompt (audio and text) and completion tokens. */
function tokenUsage(usage: Record<string, unknown> | undefined): Usage | undefined {
  if (usage?.type !== 'tokens') return undefined;
  const { input_tokens: input, output_tokens: output, total_tokens: total } = usage;
  if (!isCount(input) || !isCount(output)) return undefined;
  const details = usage.input_token_details;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: isCount(total) ? total : input + output,
    ...(details !== null && typeof details === 'object'
      ? { prompt_tokens_details: { ...(details as Record<string, unknown>) } }
      : {}),
  };
}

function isSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
