/**
 * Writes a transcription answer in the format the caller asked for. An upstream that already answered
 * in that format (an OpenAI-style one asked for it) is sent as it came; otherwise the answer is written
 * from the transcript (OpenAI's verbose_json shape): json `{text}`, verbose_json, text, and SRT or
 * WebVTT cues built from its segments (one cue over the whole audio when there are none).
 */
import type { Transcript, TranscriptionFormat, TranscriptionResult } from '../../canonical/modalities.ts';

export interface EncodedTranscription {
  contentType: string;
  body: string;
}

export const TRANSCRIPTION_CONTENT_TYPES: Readonly<Record<TranscriptionFormat, string>> = {
  json: 'application/json',
  verbose_json: 'application/json',
  text: 'text/plain; charset=utf-8',
  srt: 'text/plain; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
};

export function encodeTranscription(
  result: TranscriptionResult,
  format: TranscriptionFormat,
): EncodedTranscription {
  if (result.raw) return result.raw;
  const transcript = result.transcript ?? { text: '' };
  return { contentType: TRANSCRIPTION_CONTENT_TYPES[format], body: writeTranscript(transcript, format) };
}

export function writeTranscript(transcript: Transcript, format: TranscriptionFormat): string {
  switch (format) {
    case 'json':
      return JSON.stringify({
        text: transcript.text,
        ...(transcript.usage ? { usage: transcript.usage } : {}),
      });
    case 'verbose_json':
      return JSON.stringify({ task: 'transcribe', ...transcript });
    case 'text':
      return `${transcript.text}\n`;
    case 'srt':
      return cuesOf(transcript)
        .map(
          (cue, index) =>
            `${index + 1}\n${timestamp(cue.start, ',')} --> ${timestamp(cue.end, ',')}\n${cue.text}\n`,
        )
        .join('\n');
    case 'vtt':
      return `WEBVTT\n\n${cuesOf(transcript)
        .map((cue) => `${timestamp(cue.start, '.')} --> ${timestamp(cue.end, '.')}\n${cue.text}\n`)
        .join('\n')}`;
  }
}

interface Cue {
  start: number;
  end: number;
  text: string;
}

function cuesOf(transcript: Transcript): Cue[] {
  const segments = transcript.segments ?? [];
  if (segments.length > 0)
    return segments.map((segment) => ({
      start: segment.start,
      end: segment.end,
      text: cueText(segment.text),
    }));
  const text = cueText(transcript.text);
  return text === '' ? [] : [{ start: 0, end: transcript.duration ?? 0, text }];
}

/** Cue text without the blank lines that would end a cue early. */
function cueText(text: string): string {
  return text
    .trim()
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .join('\n');
}

/** `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (WebVTT); hours grow past two digits when they must. */
export function timestamp(seconds: number, separator: ',' | '.'): string {
  const total = Math.max(0, Math.round((Number.isFinite(seconds) ? seconds : 0) * 1000));
  const milliseconds = total % 1000;
  const wholeSeconds = Math.floor(total / 1000);
  const hours = Math.floor(wholeSeconds / 3600);
  const minutes = Math.floor((wholeSeconds % 3600) / 60);
  const secs = wholeSeconds % 60;
  return `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(secs, 2)}${separator}${pad(milliseconds, 3)}`;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}
