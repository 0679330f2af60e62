/**
 * Incremental, bounded decoding of the AWS event-stream binary framing (ConverseStream's body): each
 * frame's length comes from its 12-byte prelude and is checked before anything is buffered, at most one
 * partial frame is held, every byte is copied at most once, and the codec checks both CRCs.
 */
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { UpstreamError } from '../upstream-error.ts';

export type { Message } from '@smithy/eventstream-codec';

/** Prelude (total and headers length, prelude CRC) plus the message CRC. */
const MINIMUM_FRAME_BYTES = 16;
export const MAXIMUM_FRAME_BYTES = 16 * 1024 * 1024;

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export class EventStreamFrames {
  /** Pieces of the one frame not yet complete. */
  private parts: Uint8Array[] = [];
  private partBytes = 0;
  /** Total length of the partial frame, 0 while its first 4 bytes have not arrived. */
  private frameLength = 0;

  /** The frames completed by `chunk`, in order. Throws a retryable protocol UpstreamError. */
  push(chunk: Uint8Array): Message[] {
    const messages: Message[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      if (this.partBytes === 0) {
        const available = chunk.length - offset;
        if (available >= 4) {
          const length = frameLengthAt(chunk, offset);
          if (available >= length) {
            messages.push(decode(chunk.subarray(offset, offset + length)));
            offset += length;
            continue;
          }
          this.frameLength = length;
        }
        this.keep(chunk.subarray(offset));
        break;
      }
      const wanted = (this.frameLength || 4) - this.partBytes;
      const piece = chunk.subarray(offset, offset + wanted);
      this.keep(piece);
      offset += piece.length;
      if (this.frameLength === 0) {
        if (this.partBytes < 4) break;
        this.frameLength = frameLengthAt(this.joined(), 0);
      }
      if (this.partBytes === this.frameLength) {
        const frame = this.joined();
        this.parts = [];
        this.partBytes = 0;
        this.frameLength = 0;
        messages.push(decode(frame));
      }
    }
    return messages;
  }

  /** True when the body ended in the middle of a frame. */
  get incomplete(): boolean {
    return this.partBytes > 0;
  }

  private keep(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.parts.push(piece);
    this.partBytes += piece.length;
  }

  private joined(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0]!;
    const joined = Buffer.concat(this.parts);
    this.parts = [joined];
    return joined;
  }
}

function frameLengthAt(bytes: Uint8Array, offset: number): number {
  const length = new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getUint32(0, false);
  if (length < MINIMUM_FRAME_BYTES || length > MAXIMUM_FRAME_BYTES) {
    throw new UpstreamError({
      kind: 'protocol',
      retryable: true,
      message: `the upstream sent an event-stream frame of ${length} bytes (allowed ${MINIMUM_FRAME_BYTES} to ${MAXIMUM_FRAME_BYTES})`,
    });
  }
  return length;
}

function decode(frame: Uint8Array): Message {
  try {
    return codec.decode(frame);
  } catch {
    throw new UpstreamError({
      kind: 'protocol',
      retryable: true,
      message: 'the upstream sent a corrupt event-stream frame (checksum or header mismatch)',
    });
  }
}
