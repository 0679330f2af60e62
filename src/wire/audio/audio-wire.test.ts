/**
 * The audio wire formats: speech and transcription requests refused with 400 naming the field, and a
 * transcript written in every public transcription format (SRT and WebVTT timestamps, one cue over the
 * whole audio when there are no segments, the upstream's own answer passed as it came).
 */
import { describe, expect, it } from 'vitest';
import type { Transcript, UploadedFile } from '../../canonical/modalities.ts';
import { GatewayError } from '../../lib/gateway-error.ts';
import { decodeSpeechRequest } from './decode-speech-request.ts';
import { decodeTranscriptionRequest } from './decode-transcription-request.ts';
import { encodeTranscription, timestamp, writeTranscript } from './encode-transcription.ts';

const file: UploadedFile = {
  filename: 'a.wav',
  contentType: 'audio/wav',
  bytes: 10,
  blob: async () => new Blob([]),
};

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('speech request', () => {
  it('defaults response_format to mp3 and keeps unknown fields for the upstream', () => {
    expect(decodeSpeechRequest({ model: 'tts', input: 'hi', voice: 'alloy', extra: 1 })).toEqual({
      model: 'tts',
      input: 'hi',
      voice: 'alloy',
      extra: 1,
      response_format: 'mp3',
    });
  });

  it.each([
    [{ input: 'x' }, 'model'],
    [{ model: 'tts' }, 'input'],
    [{ model: 'tts', input: '' }, 'input'],
    [{ model: 'tts', input: 42 }, 'input'],
    [{ model: 'tts', input: 'x'.repeat(4097) }, 'input'],
    [{ model: 'tts', input: 'x', voice: 7 }, 'voice'],
    [{ model: 'tts', input: 'x', response_format: 'ogg' }, 'response_format'],
    [{ model: 'tts', input: 'x', speed: 0.1 }, 'speed'],
    [{ model: 'tts', input: 'x', speed: '1' }, 'speed'],
    [{ model: 'tts', input: 'x', instructions: [] }, 'instructions'],
    [{ model: 'tts', input: 'x', stream_format: 'sse' }, 'stream_format'],
    [{ model: 'a\0b', input: 'x' }, 'model'],
  ])('refuses %j with 400 naming %s', (body, param) => {
    const error = refusal(() => decodeSpeechRequest(body));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });

  it('counts the 4096-character bound in code points (an emoji is one character)', () => {
    expect(decodeSpeechRequest({ model: 'tts', input: '😀'.repeat(4096) }).input).toHaveLength(8192);
  });
});

describe('transcription request', () => {
  it('reads the known fields in any order and keeps the others, in order, for the upstream', () => {
    const request = decodeTranscriptionRequest(
      [
        ['timestamp_granularities[]', 'word'],
        ['temperature', '0.2'],
        ['model', 'whisper'],
        ['timestamp_granularities[]', 'segment'],
        ['response_format', 'srt'],
        ['language', 'en'],
        ['prompt', 'names: Ada'],
      ],
      file,
    );
    expect(request).toMatchObject({
      model: 'whisper',
      response_format: 'srt',
      temperature: 0.2,
      language: 'en',
      prompt: 'names: Ada',
      extra: [
        ['timestamp_granularities[]', 'word'],
        ['timestamp_granularities[]', 'segment'],
      ],
    });
    expect(decodeTranscriptionRequest([['model', 'w']], file).response_format).toBe('json');
  });

  it.each([
    [[], file, 'model'],
    [[['model', 'w']], undefined, 'file'],
    [[['model', 'w']], { ...file, bytes: 0 }, 'file'],
    [[['model', ' ']], file, 'model'],
    [
      [
        ['model', 'w'],
        ['model', 'v'],
      ],
      file,
      'model',
    ],
    [
      [
        ['model', 'w'],
        ['response_format', 'xml'],
      ],
      file,
      'response_format',
    ],
    [
      [
        ['model', 'w'],
        ['temperature', '1.5'],
      ],
      file,
      'temperature',
    ],
    [
      [
        ['model', 'w'],
        ['temperature', 'hot'],
      ],
      file,
      'temperature',
    ],
    [
      [
        ['model', 'w'],
        ['language', ''],
      ],
      file,
      'language',
    ],
    [
      [
        ['model', 'w'],
        ['prompt', 'a\0'],
      ],
      file,
      'prompt',
    ],
    [
      [
        ['model', 'w'],
        ['stream', 'true'],
      ],
      file,
      'stream',
    ],
  ] as const)('refuses fields %j (file %#) with 400 naming %s', (fields, upload, param) => {
    const error = refusal(() => decodeTranscriptionRequest(fields, upload));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});

describe('transcription formats', () => {
  const transcript: Transcript = {
    text: 'Hello there. General Kenobi.',
    language: 'english',
    duration: 3725.25,
    segments: [
      { id: 0, start: 0, end: 1.5, text: ' Hello there.' },
      { id: 1, start: 1.5, end: 3725.2504, text: ' General Kenobi.' },
    ],
    usage: { type: 'duration', seconds: 3726 },
  };

  it('writes SRT cues numbered from 1 with comma milliseconds', () => {
    expect(writeTranscript(transcript, 'srt')).toBe(
      '1\n00:00:00,000 --> 00:00:01,500\nHello there.\n\n2\n00:00:01,500 --> 01:02:05,250\nGeneral Kenobi.\n',
    );
  });

  it('writes WebVTT with its header and dot milliseconds', () => {
    expect(writeTranscript(transcript, 'vtt')).toBe(
      'WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello there.\n\n00:00:01.500 --> 01:02:05.250\nGeneral Kenobi.\n',
    );
  });

  it('writes one cue over the whole duration when there are no segments', () => {
    const plain = { text: 'Just text.', duration: 2.0004 };
    expect(writeTranscript(plain, 'srt')).toBe('1\n00:00:00,000 --> 00:00:02,000\nJust text.\n');
    expect(writeTranscript(plain, 'vtt')).toBe('WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nJust text.\n');
  });

  it('writes json with text and usage, verbose_json with the whole transcript, text as plain text', () => {
    expect(JSON.parse(writeTranscript(transcript, 'json'))).toEqual({
      text: transcript.text,
      usage: transcript.usage,
    });
    expect(JSON.parse(writeTranscript(transcript, 'verbose_json'))).toEqual({
      task: 'transcribe',
      ...transcript,
    });
    expect(writeTranscript(transcript, 'text')).toBe(`${transcript.text}\n`);
  });

  it('sends an upstream answer already in the requested format as it came', () => {
    const raw = { contentType: 'text/plain; charset=utf-8', body: '1\n00:00:00,000 --> 00:00:01,000\nx\n' };
    expect(encodeTranscription({ raw, transcript }, 'srt')).toBe(raw);
    expect(encodeTranscription({ transcript }, 'vtt').contentType).toBe('text/vtt; charset=utf-8');
  });

  it('grows hours past two digits and clamps negative times', () => {
    expect(timestamp(360_000.5, ',')).toBe('100:00:00,500');
    expect(timestamp(-1, '.')).toBe('00:00:00.000');
  });
});
