/**
 * How each public `response_format` is asked of ElevenLabs' text-to-speech stream (its `output_format`
 * query value), and the WAV header put in front of PCM when the caller asked for `wav`: the stream
 * endpoint offers no WAV container, so 24 kHz 16-bit mono PCM (OpenAI's `pcm`) is requested and wrapped.
 */
import type { SpeechFormat } from '../../canonical/modalities.ts';

export interface OutputFormat {
  /** ElevenLabs' `output_format` query value. */
  outputFormat: string;
  /** What the caller is told the audio is (OpenAI's content types). */
  contentType: string;
  /** The PCM stream gets a WAV header in front. */
  wav: boolean;
}

export const PCM_SAMPLE_RATE = 24_000;

const OUTPUT_FORMATS: Readonly<Partial<Record<SpeechFormat, OutputFormat>>> = {
  mp3: { outputFormat: 'mp3_44100_128', contentType: 'audio/mpeg', wav: false },
  opus: { outputFormat: 'opus_48000_64', contentType: 'audio/opus', wav: false },
  pcm: { outputFormat: `pcm_${PCM_SAMPLE_RATE}`, contentType: 'audio/pcm', wav: false },
  wav: { outputFormat: `pcm_${PCM_SAMPLE_RATE}`, contentType: 'audio/wav', wav: true },
};

/** The public formats ElevenLabs can serve (aac and flac have no ElevenLabs stream format). */
export const SUPPORTED_FORMATS = Object.keys(OUTPUT_FORMATS) as SpeechFormat[];

export function outputFormatOf(format: SpeechFormat): OutputFormat | undefined {
  return OUTPUT_FORMATS[format];
}

/** Bytes of the canonical 44-byte header of PCM audio in a RIFF/WAVE file. */
export const WAV_HEADER_BYTES = 44;

/** The size the header gives while the length is unknown; the speech route rewrites it (spec rule 7). */
const UNKNOWN_SIZE = 0xffffffff;

/** A WAV header for 16-bit mono little-endian PCM at `sampleRate`, its sizes left as placeholders. */
export function wavHeader(sampleRate = PCM_SAMPLE_RATE): Buffer {
  const channels = 1;
  const bytesPerSample = 2;
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(UNKNOWN_SIZE, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // size of the fmt chunk
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * bytesPerSample, 28); // byte rate
  header.writeUInt16LE(channels * bytesPerSample, 32); // block align
  header.writeUInt16LE(bytesPerSample * 8, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(UNKNOWN_SIZE, 40);
  return header;
}
