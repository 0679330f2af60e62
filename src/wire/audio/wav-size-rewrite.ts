/**
 * Spec rule 7: a streaming provider writes a WAV header before it knows the audio's length, with
 * placeholder sizes (0xFFFFFFFF or 0) in the RIFF and data chunk headers; players and parsers that
 * trust them fail. This stage rewrites them with the real sizes, holding back only what that needs:
 *
 * - the header itself (RIFF/WAVE, `fmt `, any LIST or other chunks, up to the data chunk's header);
 * - when the upstream announced its length, nothing more: the sizes follow from it, the rest streams;
 * - when it did not and the header has placeholders, the sizes are known only at the end, so the audio
 *   is held until then, at most `maxHeldBytes` (see MAX_HELD_WAV_BYTES) for one request and at most
 *   MAX_HELD_WAV_TOTAL_BYTES for all requests of the process together (ElevenLabs' WAV always takes
 *   this path: it streams PCM without a length and the adapter writes placeholder sizes).
 *
 * A header without placeholders and without an announced length is trusted; anything that is not a
 * RIFF/WAVE stream passes unchanged.
 */
import { ErrorCode, ErrorType } from '../../lib/error-catalogue.ts';
import { GatewayError } from '../../lib/gateway-error.ts';

/**
 * The most WAV audio held to fix its header when its length was not announced. OpenAI's longest speech
 * (4096 characters, about five minutes) is about 15 MB of 24 kHz 16-bit mono; 64 MiB leaves room for
 * 48 kHz stereo and slow speech while bounding what one request can pin in memory.
 */
export const MAX_HELD_WAV_BYTES = 64 * 1024 * 1024;

/**
 * The most WAV audio held by all requests of the process together: four requests at their own bound.
 * A request that would pass it is refused with 503 (retry shortly, or ask for another format) rather
 * than letting concurrent long WAV requests pin unbounded memory.
 */
export const MAX_HELD_WAV_TOTAL_BYTES = 4 * MAX_HELD_WAV_BYTES;

/** Bytes held now against a shared bound. */
export class HeldBytes {
  readonly limit: number;
  private held = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  get bytes(): number {
    return this.held;
  }

  /** Holds `bytes` more; false (nothing held) when that would pass the bound. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

/** The process's held WAV bytes. */
export const heldWavBytes = new HeldBytes(MAX_HELD_WAV_TOTAL_BYTES);

export interface HoldLimits {
  /** The most one request holds (default MAX_HELD_WAV_BYTES). */
  maxHeldBytes?: number;
  /** The bound shared with the other requests (default the process's). */
  shared?: HeldBytes;
}

/** Headers larger than this (a huge LIST chunk) are not searched for the data chunk. */
const MAX_HEADER_BYTES = 64 * 1024;
const UNKNOWN_SIZE = 0xffffffff;

export interface WavHeader {
  riffSize: number;
  dataSize: number;
  /** Offset of the data chunk's size field. */
  dataSizeAt: number;
  /** Offset of the first audio byte. */
  dataStart: number;
}

export function isPlaceholder(size: number): boolean {
  return size === 0 || size === UNKNOWN_SIZE;
}

/**
 * The header of a RIFF/WAVE stream up to its data chunk; `more` when `head` ends before it; undefined
 * when the bytes are not a WAV whose sizes can be fixed.
 */
export function parseWavHeader(head: Buffer): WavHeader | 'more' | undefined {
  if (head.length < 12) return matchesStart(head) ? 'more' : undefined;
  if (head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let offset = 12;
  for (;;) {
    if (offset > MAX_HEADER_BYTES) return undefined;
    if (head.length < offset + 8) return 'more';
    const size = head.readUInt32LE(offset + 4);
    if (head.toString('latin1', offset, offset + 4) === 'data')
      return {
        riffSize: head.readUInt32LE(4),
        dataSize: size,
        dataSizeAt: offset + 4,
        dataStart: offset + 8,
      };
    // A chunk before the audio whose size is unknown cannot be skipped.
    if (size === UNKNOWN_SIZE) return undefined;
    offset += 8 + size + (size % 2);
  }
}

/** The audio with its WAV sizes fixed; `contentLength` is the upstream's announced length, if any. */
export async function* rewriteWavSizes(
  audio: AsyncIterable<Buffer>,
  contentLength: number | undefined,
  limits: HoldLimits = {},
): AsyncGenerator<Buffer> {
  const maxHeldBytes = limits.maxHeldBytes ?? MAX_HELD_WAV_BYTES;
  const shared = limits.shared ?? heldWavBytes;
  const iterator = audio[Symbol.asyncIterator]();
  let taken = 0;
  const hold = (bytes: number) => {
    if (!shared.take(bytes)) throw tooMuchHeld(shared.limit);
    taken += bytes;
  };
  try {
    let head: Buffer = Buffer.alloc(0);
    let header: WavHeader | 'more' | undefined = 'more';
    while (header === 'more') {
      const next = await iterator.next();
      if (next.done) {
        // Ended inside the header: nothing to fix, the bytes go as they came.
        if (head.length > 0) yield head;
        return;
      }
      head = head.length === 0 ? next.value : Buffer.concat([head, next.value]);
      header = parseWavHeader(head);
    }
    if (header === undefined || contentLength !== undefined) {
      yield header === undefined || contentLength === undefined
        ? head
        : withSizes(head, header, contentLength);
      yield* remaining(iterator);
      return;
    }
    if (!isPlaceholder(header.riffSize) && !isPlaceholder(header.dataSize)) {
      yield head;
      yield* remaining(iterator);
      return;
    }
    const held: Buffer[] = [];
    let total = head.length;
    hold(head.length);
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      total += next.value.length;
      if (total > maxHeldBytes) throw tooLongToHold(maxHeldBytes);
      hold(next.value.length);
      held.push(next.value);
    }
    yield withSizes(head, header, total);
    yield* held;
  } finally {
    shared.give(taken);
    await iterator.return?.();
  }
}

/** A copy of the header bytes with the RIFF size (and a placeholder or overlong data size) made real. */
function withSizes(head: Buffer, header: WavHeader, total: number): Buffer {
  const fixed = Buffer.from(head);
  if (total < header.dataStart || total - 8 > UNKNOWN_SIZE) return fixed;
  fixed.writeUInt32LE(total - 8, 4);
  const dataBytes = total - header.dataStart;
  // A real data size smaller than the rest is kept: chunks (LIST, id3) may follow the audio.
  if (isPlaceholder(header.dataSize) || header.dataSize > dataBytes)
    fixed.writeUInt32LE(dataBytes, header.dataSizeAt);
  return fixed;
}

async function* remaining(iterator: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  for (;;) {
    const next = await iterator.next();
    if (next.done) return;
    yield next.value;
  }
}

function matchesStart(head: Buffer): boolean {
  const riff = Buffer.from('RIFF', 'latin1');
  const compared = Math.min(head.length, 4);
  if (!head.subarray(0, compared).equals(riff.subarray(0, compared))) return false;
  const wave = Buffer.from('WAVE', 'latin1');
  const waveBytes = head.subarray(8, 12);
  return waveBytes.equals(wave.subarray(0, waveBytes.length));
}

function tooMuchHeld(limitBytes: number): GatewayError {
  return new GatewayError({
    status: 503,
    type: ErrorType.unavailable,
    code: 'wav_hold_full',
    message: `The gateway is holding ${limitBytes} bytes of WAV audio for other requests (audio whose length the provider did not announce is held to fix its header). Retry shortly, or ask for another response_format (mp3, flac, pcm).`,
    retryAfter: 1,
  });
}

function tooLongToHold(maxBytes: number): GatewayError {
  return new GatewayError({
    status: 502,
    type: ErrorType.api,
    code: ErrorCode.upstreamError,
    message: `The upstream streamed more than ${maxBytes} bytes of WAV audio without announcing its length, more than the gateway holds to fix the WAV header. Ask for another response_format (mp3, flac, pcm) for audio this long.`,
  });
}
