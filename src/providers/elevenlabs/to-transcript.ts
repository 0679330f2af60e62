/**
 * An ElevenLabs speech-to-text answer (`text`, `language_code`, `words[]` of words, spacing and audio
 * events with `start`/`end` in seconds) as a canonical Transcript in OpenAI's verbose_json shape, from
 * which the route writes every public format. Segments are grouped from the words: a segment ends after
 * a word that ends a sentence, before a pause of at least PAUSE_SECONDS, or once it spans
 * MAX_SEGMENT_SECONDS, so subtitles stay readable.
 */
import type { Transcript } from '../../canonical/modalities.ts';
import { protocolError } from '../upstream-exchange.ts';

export const PAUSE_SECONDS = 1;
export const MAX_SEGMENT_SECONDS = 30;

interface Token {
  text: string;
  type: string;
  start?: number;
  end?: number;
}

type Segment = NonNullable<Transcript['segments']>[number];

const SENTENCE_END = /[.!?…。！？]["')\]»”’]*$/;

export function toTranscript(answer: unknown): Transcript {
  const body = answer as { text?: unknown; language_code?: unknown; words?: unknown } | null;
  if (body === null || typeof body !== 'object' || typeof body.text !== 'string')
    throw protocolError('the upstream answer is not a speech-to-text result');
  const tokens = tokensOf(body.words);
  const words = tokens
    .filter((token) => token.type === 'word' && token.start !== undefined && token.end !== undefined)
    .map((token) => ({ word: token.text, start: token.start as number, end: token.end as number }));
  const duration = lastEnd(tokens);
  return {
    text: body.text,
    ...(typeof body.language_code === 'string' ? { language: body.language_code } : {}),
    ...(duration !== undefined ? { duration } : {}),
    words,
    segments: segmentsOf(tokens),
  };
}

function tokensOf(words: unknown): Token[] {
  if (words === undefined || words === null) return [];
  if (!Array.isArray(words)) throw protocolError('the upstream answer has malformed words');
  return words.map((item) => {
    const word = item as Record<string, unknown> | null;
    if (word === null || typeof word !== 'object' || typeof word.text !== 'string')
      throw protocolError('the upstream answer has malformed words');
    return {
      text: word.text,
      type: typeof word.type === 'string' ? word.type : 'word',
      ...(isSeconds(word.start) ? { start: word.start } : {}),
      ...(isSeconds(word.end) ? { end: word.end } : {}),
    };
  });
}

function isSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function lastEnd(tokens: readonly Token[]): number | undefined {
  let end: number | undefined;
  for (const token of tokens) if (token.end !== undefined) end = Math.max(end ?? 0, token.end);
  return end;
}

/** Groups timed tokens into segments; spacing between two segments belongs to neither. */
function segmentsOf(tokens: readonly Token[]): Segment[] {
  const segments: Segment[] = [];
  let open: { start: number; end: number; parts: string[] } | undefined;
  const close = () => {
    const text = open?.parts.join('').trim();
    if (open && text) segments.push({ id: segments.length, start: open.start, end: open.end, text });
    open = undefined;
  };
  for (const token of tokens) {
    if (token.type === 'spacing') {
      open?.parts.push(token.text);
      continue;
    }
    if (token.start === undefined || token.end === undefined) {
      open?.parts.push(token.text);
      continue;
    }
    if (open && (token.start - open.end >= PAUSE_SECONDS || token.end - open.start > MAX_SEGMENT_SECONDS))
      close();
    open ??= { start: token.start, end: token.end, parts: [] };
    open.parts.push(token.text);
    open.end = Math.max(open.end, token.end);
    if (token.type === 'word' && SENTENCE_END.test(token.text)) close();
  }
  close();
  return segments;
}
