import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../upstream-error.ts';
import { MAX_SEGMENT_SECONDS, toTranscript } from './to-transcript.ts';

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../../test/fakes/elevenlabs/fixtures/${name}`, import.meta.url), 'utf8'),
  );

const word = (text: string, start: number, end: number, type = 'word') => ({ text, start, end, type });
const space = (start: number, end: number) => ({ text: ' ', start, end, type: 'spacing' });

describe('ElevenLabs speech-to-text answers as transcripts (spec rule 8)', () => {
  it('keeps text and language, lists only real words, and takes the last end as the duration', () => {
    const transcript = toTranscript(fixture('stt-pause-and-event.json'));
    expect(transcript.text).toBe("Good morning, everyone. (laughter) Let's begin the review.");
    expect(transcript.language).toBe('eng');
    expect(transcript.duration).toBe(4.95);
    expect(transcript.words?.map((entry) => entry.word)).toEqual([
      'Good',
      'morning,',
      'everyone.',
      "Let's",
      'begin',
      'the',
      'review.',
    ]);
    expect(transcript.words?.[1]).toEqual({ word: 'morning,', start: 0.42, end: 0.81 });
  });

  it('ends a segment after a sentence and before a pause of a second or more', () => {
    const transcript = toTranscript(fixture('stt-pause-and-event.json'));
    expect(transcript.segments).toEqual([
      { id: 0, start: 0.12, end: 1.4, text: 'Good morning, everyone.' },
      { id: 1, start: 1.52, end: 2.3, text: '(laughter)' },
      { id: 2, start: 3.6, end: 4.95, text: "Let's begin the review." },
    ]);
  });

  it('splits an unpunctuated monologue so no segment spans more than the maximum', () => {
    const words = [];
    for (let second = 0; second < 70; second++) {
      words.push(word('and', second, second + 0.5));
      words.push(space(second + 0.5, second + 0.6));
    }
    const segments = toTranscript({ text: 'and …', language_code: 'eng', words }).segments ?? [];
    expect(segments.length).toBe(3);
    for (const segment of segments)
      expect(segment.end - segment.start).toBeLessThanOrEqual(MAX_SEGMENT_SECONDS);
    expect(segments.map((segment) => segment.id)).toEqual([0, 1, 2]);
  });

  it('answers silence with empty words and segments and no duration (nothing to bill by)', () => {
    const transcript = toTranscript(fixture('stt-silence.json'));
    expect(transcript).toEqual({ text: '', language: 'eng', words: [], segments: [] });
  });

  it('treats an answer without text, or with malformed words, as a protocol error', () => {
    for (const answer of [
      null,
      [],
      { words: [] },
      { text: 'x', words: {} },
      { text: 'x', words: [{ start: 1 }] },
    ]) {
      expect(() => toTranscript(answer)).toThrow(UpstreamError);
    }
  });

  it('ignores untimed or negative timestamps instead of inventing times', () => {
    const transcript = toTranscript({
      text: 'a b',
      words: [{ text: 'a', type: 'word' }, space(0, 0.1), word('b', -1, 0.4)],
    });
    expect(transcript.words).toEqual([]);
    expect(transcript.duration).toBe(0.4);
  });
});
