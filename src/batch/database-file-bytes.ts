/**
 * The bytes of batch files in the `database` store (migration 0011): written as chunks of text cut
 * between characters, a statement of chunks at a time, under a pending mark, and made visible by the
 * row's insert; read back a window of chunks per query into a text stream that runs the next query only
 * when the reader has taken the last, so neither side ever holds more than a few chunks of a file,
 * whatever its size. A failed write removes what it wrote; what a dead process left is removed by the
 * sweep before the next write. Files are UTF-8 without NUL (uploads are checked line by line, outputs
 * are JSON); a chunk that is not is refused rather than stored altered.
 */
import { isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Clock } from '../lib/clock.ts';
import type { ChunkReadScope } from '../store/db/repositories/batch-file-chunk-repository.ts';
import type { BatchFileRecord, BatchFileRepository } from '../store/db/repositories/batch-file-repository.ts';
import { fixedChunks } from './fixed-chunks.ts';

export interface ChunkSizes {
  /** Bytes of one chunk (the last of a file is shorter). */
  chunkBytes: number;
  /** Chunks written per statement (a writer holds at most this many, and the one being filled). */
  writeChunks: number;
  /** Chunks read per query (a reader holds at most this many). */
  readChunks: number;
  /** A pending mark older than this is a dead writer's: its chunks are removed. */
  staleWriteMs: number;
}

export const DEFAULT_CHUNK_SIZES: ChunkSizes = {
  // A chunk crosses into JS as a string: at 32 KiB it stays under V8's 128 KiB large-object bound even
  // as two-byte text, where strings are made and freed cheaply (decoding larger ones took 20 times longer).
  chunkBytes: 32 * 1024,
  writeChunks: 16,
  // A window is held while the socket drains, long enough for its strings to reach V8's old space: at
  // 16 chunks, three concurrent downloads of a 200 MiB file left ~100 MiB of them there between major
  // collections; at 4 the old space stayed flat.
  readChunks: 4,
  // Writing a file takes seconds (its bytes are local: a spooled upload, a batch's answers); an hour
  // leaves a slow database a wide margin. A live writer whose mark was swept fails instead of publishing.
  staleWriteMs: 60 * 60 * 1000,
};

export class DatabaseFileBytes {
  private readonly repository: BatchFileRepository;
  private readonly clock: Clock;
  private readonly sizes: ChunkSizes;

  constructor(repository: BatchFileRepository, clock: Clock, sizes: ChunkSizes) {
    this.repository = repository;
    this.clock = clock;
    this.sizes = sizes;
  }

  /**
   * Writes the chunks of file `id`, then inserts the row `finish` builds from the byte count (the file
   * becomes visible whole). On any failure the chunks written so far are removed and the error rethrown.
   */
  async write(
    id: string,
    source: AsyncIterable<Uint8Array>,
    finish: (bytes: number) => BatchFileRecord,
  ): Promise<BatchFileRecord> {
    const { chunks } = this.repository;
    const now = this.clock.now();
    await chunks.sweep(now - this.sizes.staleWriteMs);
    await chunks.begin(id, now);
    try {
      let seq = 0;
      let bytes = 0;
      let batch: string[] = [];
      const flush = async () => {
        await chunks.append(id, seq, batch);
        seq += batch.length;
        batch = [];
        // SQLite runs on this thread: let waiting requests in between two statements.
        await yieldToLoop();
      };
      for await (const chunk of fixedChunks(source, this.sizes.chunkBytes, { wholeCharacters: true })) {
        batch.push(chunkText(chunk));
        bytes += chunk.length;
        if (batch.length === this.sizes.writeChunks) await flush();
      }
      await flush();
      const record = finish(bytes);
      await this.repository.insertWritten(record);
      return record;
    } catch (error) {
      // Best effort: a removal that fails too leaves the mark, and the next write's sweep finishes it.
      await chunks.remove(id).catch(() => {});
      throw error;
    }
  }

  /**
   * The file's bytes as a stream; `scope` is the transaction to read in when the caller holds one. A
   * file that lacks chunks (deleted meanwhile) ends the stream with an error, never short and silent.
   */
  read(file: BatchFileRecord, scope?: ChunkReadScope): Readable {
    // Text mode, so a socket encodes each chunk straight into its write (no byte copy of the file is
    // made here), with a mark of one chunk: the stream asks for the next only once it holds less.
    return Readable.from(this.pieces(file, scope), {
      objectMode: false,
      encoding: 'utf8',
      highWaterMark: this.sizes.chunkBytes,
    });
  }

  /** Removes the chunks of `id` (also those of a write that never finished). */
  remove(id: string): Promise<void> {
    return this.repository.chunks.remove(id);
  }

  private async *pieces(
    file: BatchFileRecord,
    scope: ChunkReadScope | undefined,
  ): AsyncGenerator<string | Buffer> {
    let seq = 0;
    let bytes = 0;
    for (let more = true; more; ) {
      const window = await this.repository.chunks.read(file.id, seq, this.sizes.readChunks, scope);
      more = window.length === this.sizes.readChunks;
      for (const chunk of window) {
        // A gap (chunks removed under us): stop; the count below reports it.
        if (chunk.seq !== seq) {
          more = false;
          break;
        }
        seq++;
        bytes += Buffer.byteLength(chunk.text);
        yield chunk.text;
      }
      // A consumer that never waits (a fast socket) would otherwise keep SQLite's synchronous reads
      // going without letting other requests in.
      await yieldToLoop();
    }
    if (seq === 0) bytes = yield* this.rowContent(file, scope);
    if (bytes !== file.bytes)
      throw new Error(`batch file ${file.id} holds ${bytes} of its ${file.bytes} bytes in the database`);
  }

  /** A file an older replica wrote into its row during a rolling upgrade: read whole, as that build did. */
  private async *rowContent(
    file: BatchFileRecord,
    scope: ChunkReadScope | undefined,
  ): AsyncGenerator<Buffer, number> {
    const text = await this.repository.rowContent(file.id, scope);
    if (text === null) return 0;
    const bytes = Buffer.from(text, 'utf8');
    for (let offset = 0; offset < bytes.length; offset += this.sizes.chunkBytes)
      yield bytes.subarray(offset, offset + this.sizes.chunkBytes);
    return bytes.length;
  }
}

/** A chunk as the text the database stores; throws on bytes text cannot hold unchanged. */
function chunkText(chunk: Buffer): string {
  if (chunk.includes(0))
    throw new Error('a batch file holds a NUL byte, which the database store cannot keep');
  if (!isUtf8(chunk))
    throw new Error('a batch file is not valid UTF-8, which the database store keeps as text');
  return chunk.toString('utf8');
}
