/**
 * The directory store of batch files (general_settings.batch_file_store set to an absolute path): one
 * file per id, 0600, in a folder made (or tightened to) 0700. A file is written under a temporary name
 * and renamed into place, so a reader never sees half a file and a failed write leaves nothing.
 */
import { createReadStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ensurePrivateFolder } from '../lib/private-files.ts';

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export class BatchFileDirectory {
  readonly folder: string;
  private ready = false;

  constructor(folder: string) {
    this.folder = folder;
  }

  /** Writes the chunks as the file of `id`; returns the bytes written. */
  async put(id: string, chunks: AsyncIterable<Uint8Array | string>): Promise<number> {
    this.prepare();
    const target = this.pathOf(id);
    const temporary = `${target}.partial`;
    const handle = await open(temporary, 'wx', 0o600);
    let bytes = 0;
    try {
      for await (const chunk of chunks) {
        const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        for (let offset = 0; offset < buffer.length; ) {
          const { bytesWritten } = await handle.write(buffer, offset);
          offset += bytesWritten;
        }
        bytes += buffer.length;
      }
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => {});
      await rm(temporary, { force: true });
      throw error;
    }
    await handle.close();
    await rename(temporary, target);
    return bytes;
  }

  /** A stream of the file's bytes (an error event when it is gone). */
  open(id: string): Readable {
    return createReadStream(this.pathOf(id));
  }

  /** Removes the file and any half-written copy (a writer that died); a missing one is fine. */
  async delete(id: string): Promise<void> {
    await rm(this.pathOf(id), { force: true });
    await rm(`${this.pathOf(id)}.partial`, { force: true });
  }

  private prepare(): void {
    if (this.ready) return;
    ensurePrivateFolder(this.folder);
    this.ready = true;
  }

  private pathOf(id: string): string {
    // Ids are made by the gateway; this only guards against a path ever being built from anything else.
    if (!ID_PATTERN.test(id)) throw new Error(`not a batch file id: ${id}`);
    return join(this.folder, id);
  }
}
