import { describe, expect, it } from 'vitest';
import { errorCodeOf } from './elevenlabs-errors.ts';
import { elevenLabsEndpoint, validateElevenLabsParams } from './elevenlabs-settings.ts';
import { outputFormatOf, SUPPORTED_FORMATS, WAV_HEADER_BYTES, wavHeader } from './speech-formats.ts';

describe('elevenlabs params', () => {
  it('requires api_key unless api_base points at a proxy that adds its own', () => {
    expect(validateElevenLabsParams({ model: 'scribe_v1' })).toEqual([
      'api_key: is required for the ElevenLabs API (sent as the xi-api-key header)',
    ]);
    expect(validateElevenLabsParams({ model: 'scribe_v1', api_base: 'http://proxy.internal' })).toEqual([]);
    expect(validateElevenLabsParams({ model: 'scribe_v1', api_key: 'k' })).toEqual([]);
  });

  it('names each param of the wrong type', () => {
    expect(
      validateElevenLabsParams({
        model: 'eleven_multilingual_v2',
        api_key: 7,
        api_base: 'ftp://x',
        headers: { a: 1 },
        extra_headers: [],
      }),
    ).toEqual([
      'api_key: must be a non-empty string',
      'api_base: must be an http(s) URL such as https://api.elevenlabs.io',
      'headers: must be a map of header names to strings',
      'extra_headers: must be a map of header names to strings',
    ]);
  });

  it('sends the key as xi-api-key to the public API by default, with or without /v1 on api_base', () => {
    expect(elevenLabsEndpoint({ api_key: 'secret', headers: { 'x-team': 'a' } })).toEqual({
      origin: 'https://api.elevenlabs.io',
      prefix: '',
      headers: { 'x-team': 'a', 'xi-api-key': 'secret' },
    });
    expect(elevenLabsEndpoint({ api_base: 'http://127.0.0.1:9/el/v1/' }).prefix).toBe('/el');
  });
});

describe('elevenlabs error codes', () => {
  it('keeps detail.status or the first validation type, only when it is a short identifier', () => {
    expect(errorCodeOf('{"detail":{"status":"voice_not_found","message":"secret"}}')).toBe('voice_not_found');
    expect(errorCodeOf('{"detail":[{"type":"missing","loc":["body","text"],"msg":"x"}]}')).toBe('missing');
    expect(errorCodeOf('{"detail":{"status":"has spaces and secrets"}}')).toBeUndefined();
    expect(errorCodeOf('{"detail":"Not Found"}')).toBeUndefined();
    expect(errorCodeOf('<html>')).toBeUndefined();
  });
});

describe('elevenlabs speech formats', () => {
  it('asks for 24 kHz PCM for pcm and wav (OpenAI pcm is 24 kHz 16-bit mono), and refuses aac and flac', () => {
    expect(outputFormatOf('pcm')?.outputFormat).toBe('pcm_24000');
    expect(outputFormatOf('wav')).toEqual({ outputFormat: 'pcm_24000', contentType: 'audio/wav', wav: true });
    expect(outputFormatOf('mp3')?.contentType).toBe('audio/mpeg');
    expect(outputFormatOf('aac')).toBeUndefined();
    expect(outputFormatOf('flac')).toBeUndefined();
    expect(SUPPORTED_FORMATS).toEqual(['mp3', 'opus', 'pcm', 'wav']);
  });

  it('writes a 44-byte PCM WAV header with placeholder sizes for the route to fix (spec rule 7)', () => {
    const header = wavHeader();
    expect(header.length).toBe(WAV_HEADER_BYTES);
    expect(header.toString('ascii', 0, 4)).toBe('RIFF');
    expect(header.readUInt32LE(4)).toBe(0xffffffff);
    expect(header.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(header.readUInt16LE(20)).toBe(1);
    expect(header.readUInt16LE(22)).toBe(1);
    expect(header.readUInt32LE(24)).toBe(24_000);
    expect(header.readUInt32LE(28)).toBe(48_000);
    expect(header.readUInt16LE(32)).toBe(2);
    expect(header.readUInt16LE(34)).toBe(16);
    expect(header.toString('ascii', 36, 40)).toBe('data');
    expect(header.readUInt32LE(40)).toBe(0xffffffff);
  });
});
