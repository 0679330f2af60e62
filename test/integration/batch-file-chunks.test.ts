/**
 * The `database` file store in chunks (issue 25), on SQLite and PostgreSQL, with chunks made small so
 * files cross many boundaries: bytes round-trip exactly (multi-byte UTF-8 that a piece of the source
 * or a fixed-size cut would split is kept whole in one chunk); a
 * download reads a bounded window of chunks at a time and its first bytes come before the rest is read;
 * an upload never holds more than one statement's chunks and the one being filled; a write that fails,
 * or whose chunks a sweep removed, publishes nothing and leaves nothing; chunks a dead writer or an
 * interrupted delete left are removed by the next write's sweep once stale; a file deleted during a
 * download ends it with an error; a batch reads its input through the transaction that creates it; the
 * directory store writes as it reads.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer, text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchFiles, type BatchFilesOptions } from '../../src/batch/batch-files.ts';
import { createBatch } from '../../src/batch/create-batch.ts';
import { DEFAULT_CHUNK_SIZES } from '../../src/batch/database-file-bytes.ts';
import { createDatabase, type Database } from '../../src/store/db/create-database.ts';
import { migrateToLatest } from '../../src/store/db/migrate.ts';
import { BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';

const owner = { keyId: 'key-chunks', teamId: null };
const limits = {
  maxLines: 1_000,
  maxLineBytes: 100_000,
  lineSetting: 'general_settings.max_request_body_bytes',
};

/** A batch input line whose input holds characters of two, three and four UTF-8 bytes. */
const line = (index: number) =>
  `${JSON.stringify({ custom_id: `c${index}`, method: 'POST', url: '/v1/embeddings', body: { model: 'demo', input: `é€😀 ${index} ${'ß'.repeat(index % 7)}` } })}\n`;

/** The bytes as a source that yields irregular pieces (1, 2, 3 … bytes, then the rest). */
function pieces(bytes: Buffer, onPull?: (pulled: number) => void): AsyncIterable<Uint8Array> {
  return (async function* () {
    let offset = 0;
    for (let size = 1; offset < bytes.length; size = (size % 97) + 1) {
      const piece = bytes.subarray(offset, offset + size);
      offset += piece.length;
      onPull?.(offset);
      yield piece;
    }
  })();
}

describe.each(await availableBackends())('the chunked database file store on %s', (_name, makeBackend) => {
  let backend: Backend;
  let database: Database;
  const queries: string[] = [];
  /** Runs after each query (set by a test to act between two statements of the code under test). */
  let afterQuery: ((sql: string) => void) | undefined;
  const clock = new ManualClock();
  const files = (chunks: BatchFilesOptions['chunks'], db = database) =>
    new BatchFiles({ db: db.db, store: 'database', clock, limits, chunks });

  beforeAll(async () => {
    backend = makeBackend();
    database = await createDatabase({
      url: backend.databaseUrl,
      poolSize: 4,
      ...(backend.schema ? { schema: backend.schema } : {}),
      onQuery: (sql) => {
        queries.push(sql);
        afterQuery?.(sql);
      },
    });
    await migrateToLatest(database);
  });
  afterAll(async () => {
    await database?.close();
    await backend?.cleanup();
  });

  const chunkRows = (fileId: string) =>
    database.db
      .selectFrom('batch_file_chunks')
      .select(['seq', 'data'])
      .where('file_id', '=', fileId)
      .orderBy('seq')
      .execute();
  const pendingMarks = async (fileId: string) =>
    (
      await database.db
        .selectFrom('batch_file_pending')
        .select('since')
        .where('file_id', '=', fileId)
        .execute()
    ).length;
  const chunkReads = () => queries.filter((sql) => /^select .* from "batch_file_chunks"/i.test(sql)).length;
  const chunkInserts = () => queries.filter((sql) => /^insert into "batch_file_chunks"/i.test(sql)).length;

  it('round-trips a file of many chunks byte for byte, multi-byte UTF-8 characters kept whole at chunk boundaries', async () => {
    const store = files({ chunkBytes: 7, writeChunks: 3, readChunks: 2 });
    const bytes = Buffer.from(Array.from({ length: 40 }, (_, index) => line(index)).join(''));
    const record = await store.createInput(owner, {
      filename: 'utf8.jsonl',
      bytes: bytes.length,
      open: () => pieces(bytes),
    });
    expect(record).toMatchObject({ bytes: bytes.length, line_count: 40, storage: 'database' });
    const rows = await chunkRows(record.id);
    expect(rows.map((row) => Number(row.seq))).toEqual(rows.map((_, index) => index));
    // The source's pieces cut characters, and so would 7-byte chunks: each chunk ends before a
    // character it would cut (shorter than 7 bytes), so each holds whole characters.
    const sizes = rows.map((row) => Buffer.byteLength(row.data));
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(bytes.length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(7);
    expect(sizes.slice(0, -1).filter((size) => size < 7).length).toBeGreaterThan(10);
    expect(rows.map((row) => row.data).join('')).toBe(bytes.toString('utf8'));
    const downloaded = await buffer(store.content(record));
    expect(downloaded.equals(bytes)).toBe(true);
    expect(await text(store.content(record))).toBe(bytes.toString('utf8'));
  });

  it('reads a download a bounded window of chunks at a time: its first bytes come before the rest is read', async () => {
    const store = files({ chunkBytes: 64, writeChunks: 8, readChunks: 4 });
    const bytes = Buffer.from(Array.from({ length: 6399 }, (_, index) => 32 + (index % 94)));
    const record = await store.writeOutput(
      owner,
      'window.jsonl',
      (async function* () {
        yield bytes.toString('latin1'); // one line of printable ASCII; writeOutput adds its newline
      })(),
    );
    const whole = Buffer.concat([bytes, Buffer.from('\n')]);
    expect(record.bytes).toBe(6400);
    const before = chunkReads();
    const stream = store.content(record);
    const iterator = stream[Symbol.asyncIterator]();
    // The stream is text (a socket encodes it into its write): its first piece is the first chunk.
    const first = Buffer.from((await iterator.next()).value as string);
    expect(first.equals(whole.subarray(0, 64))).toBe(true);
    // 100 chunks, 4 per query: the first bytes left after at most the first two queries.
    expect(chunkReads() - before).toBeLessThanOrEqual(2);
    const rest: Buffer[] = [first];
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      rest.push(Buffer.from(next.value as string));
    expect(Buffer.concat(rest).equals(whole)).toBe(true);
    // 25 full windows and the empty read that ends the file: never more than 4 chunks per query.
    expect(chunkReads() - before).toBe(26);
  });

  it('never holds more than one statement of chunks and the one being filled while it writes', async () => {
    const chunkBytes = 100;
    const writeChunks = 4;
    const store = files({ chunkBytes, writeChunks, readChunks: 4 });
    const insertsBefore = chunkInserts();
    let pulled = 0;
    let held = 0;
    // 81 lines of 50 bytes with their newline: 41 chunks, 11 statements.
    const lines = (async function* () {
      for (let index = 0; index < 81; index++) {
        pulled += 50;
        held = Math.max(held, pulled - (chunkInserts() - insertsBefore) * writeChunks * chunkBytes);
        yield 'a'.repeat(49);
      }
    })();
    const record = await store.writeOutput(owner, 'held.jsonl', lines);
    expect(record).toMatchObject({ bytes: 4050, line_count: 81 });
    expect((await chunkRows(record.id)).length).toBe(41);
    expect(held).toBeGreaterThan(chunkBytes);
    expect(held).toBeLessThanOrEqual((writeChunks + 1) * chunkBytes);
  });

  it('leaves no row, chunk or mark behind when the source fails midway', async () => {
    const store = files({ chunkBytes: 16, writeChunks: 2, readChunks: 2 });
    const id = 'file-fails-midway';
    const failing = (async function* () {
      for (let index = 0; index < 20; index++) yield `line ${index} ${'x'.repeat(20)}`;
      throw new Error('the caller went away');
    })();
    await expect(store.writeOutput(owner, 'fail.jsonl', failing, id)).rejects.toThrow('the caller went away');
    expect(await store.repository.get(id)).toBeUndefined();
    expect(await chunkRows(id)).toEqual([]);
    expect(await pendingMarks(id)).toBe(0);
  });

  it('refuses a file holding a NUL byte (text cannot keep it), storing nothing', async () => {
    const store = files({ chunkBytes: 16, writeChunks: 2, readChunks: 2 });
    const id = 'file-with-nul';
    const lines = (async function* () {
      yield 'x'.repeat(40);
      yield 'a\u0000b';
    })();
    await expect(store.writeOutput(owner, 'nul.jsonl', lines, id)).rejects.toThrow(/NUL byte/);
    expect(await store.repository.get(id)).toBeUndefined();
    expect(await chunkRows(id)).toEqual([]);
    expect(await pendingMarks(id)).toBe(0);
  });

  it("removes a dead writer's chunks at the next write once its mark is stale, not before", async () => {
    const store = files({ chunkBytes: 16, writeChunks: 2, readChunks: 2 });
    const dead = 'file-dead-writer';
    await store.repository.chunks.begin(dead, clock.now());
    await store.repository.chunks.append(dead, 0, ['half a file']);
    const write = (name: string) =>
      store.writeOutput(
        owner,
        name,
        (async function* () {
          yield 'a line';
        })(),
      );
    await write('fresh.jsonl');
    expect((await chunkRows(dead)).length).toBe(1);
    clock.advance(DEFAULT_CHUNK_SIZES.staleWriteMs + 1);
    await write('later.jsonl');
    expect(await chunkRows(dead)).toEqual([]);
    expect(await pendingMarks(dead)).toBe(0);
  });

  it('publishes nothing when a sweep removed its chunks while it was writing', async () => {
    const store = files({ chunkBytes: 16, writeChunks: 1, readChunks: 2 });
    const id = 'file-swept-live';
    const lines = (async function* () {
      for (let index = 0; index < 10; index++) {
        // The mark looks stale to the sweep (a clock far ahead, a writer slower than the bound).
        if (index === 5) await store.repository.chunks.sweep(Number.MAX_SAFE_INTEGER);
        yield `line ${index} ${'y'.repeat(20)}`;
      }
    })();
    await expect(store.writeOutput(owner, 'swept.jsonl', lines, id)).rejects.toThrow(
      /removed while it was being written/,
    );
    expect(await store.repository.get(id)).toBeUndefined();
    expect(await chunkRows(id)).toEqual([]);
    expect(await pendingMarks(id)).toBe(0);
  });

  it('never leaves a visible file without its chunks when a sweep and the writer publishing it race', async () => {
    const store = files({ chunkBytes: 16, writeChunks: 2, readChunks: 2 });
    const id = 'file-raced';
    const record = {
      id,
      owner_key_id: owner.keyId,
      owner_team_id: null,
      purpose: 'batch_output',
      filename: 'raced.jsonl',
      bytes: 5,
      line_count: 1,
      created_at: 1,
      storage: 'database',
      deleted_at: null,
    };
    // A writer slower than the bound: its mark is stale when it publishes, just as a sweep finds it.
    await store.repository.chunks.begin(id, 1);
    await store.repository.chunks.append(id, 0, ['race\n']);
    let published: Promise<unknown> | undefined;
    afterQuery = (sql) => {
      if (published || !/^select .* from "batch_file_pending"/i.test(sql)) return;
      published = store.repository.insertWritten(record).catch((error: Error) => error);
    };
    try {
      await store.repository.chunks.sweep(clock.now());
    } finally {
      afterQuery = undefined;
    }
    const outcome = await published;
    const row = await store.repository.get(id);
    const chunks = await chunkRows(id);
    // Whoever won, the file is whole or absent: published with its chunk, or refused with none left.
    if (row) expect([outcome, chunks.map((chunk) => chunk.data)]).toEqual([undefined, ['race\n']]);
    else
      expect([String(outcome), chunks]).toEqual([
        expect.stringMatching(/removed while it was being written/),
        [],
      ]);
    expect(await pendingMarks(id)).toBe(0);
  });

  it('removes the chunks of a deleted file, and finishes a delete a crash interrupted at the next write', async () => {
    const store = files({ chunkBytes: 16, writeChunks: 4, readChunks: 2 });
    const make = (name: string) =>
      store.writeOutput(
        owner,
        name,
        (async function* () {
          yield 'z'.repeat(100);
        })(),
      );
    const deleted = await make('deleted.jsonl');
    expect(await store.delete(deleted.id)).toBe(true);
    expect(await chunkRows(deleted.id)).toEqual([]);
    expect(await pendingMarks(deleted.id)).toBe(0);
    // A process that died right after marking the file deleted: its chunks wait under a removal mark.
    const interrupted = await make('interrupted.jsonl');
    expect(await store.repository.markDeleted(interrupted.id, 1)).toBe(true);
    expect((await chunkRows(interrupted.id)).length).toBe(7);
    await make('next.jsonl');
    expect(await chunkRows(interrupted.id)).toEqual([]);
    expect(await pendingMarks(interrupted.id)).toBe(0);
  });

  it('ends a download with an error when the file is deleted under it, never short and silent', async () => {
    const store = files({ chunkBytes: 64, writeChunks: 8, readChunks: 2 });
    const record = await store.writeOutput(
      owner,
      'vanishing.jsonl',
      (async function* () {
        yield 'v'.repeat(64 * 50);
      })(),
    );
    const iterator = store.content(record)[Symbol.asyncIterator]();
    await iterator.next();
    await store.delete(record.id);
    const drain = async () => {
      for (let next = await iterator.next(); !next.done; next = await iterator.next());
    };
    await expect(drain()).rejects.toThrow(/holds \d+ of its 3201 bytes/);
  });

  it('creates a batch from a multi-chunk input read through its own transaction (a pool of one connection)', async () => {
    const single = await createDatabase({
      url: backend.databaseUrl,
      poolSize: 1,
      ...(backend.schema ? { schema: backend.schema } : {}),
    });
    try {
      const store = files({ chunkBytes: 32, writeChunks: 4, readChunks: 3 }, single);
      const bytes = Buffer.from(Array.from({ length: 30 }, (_, index) => line(index)).join(''));
      const input = await store.createInput(owner, {
        filename: 'in.jsonl',
        bytes: bytes.length,
        open: () => pieces(bytes),
      });
      const batches = new BatchRepository(single.db);
      const batch = await createBatch(
        { files: store, batches, clock },
        owner,
        { inputFileId: input.id, endpoint: '/v1/embeddings', completionWindow: '24h', metadata: null },
        input,
      );
      expect(batch.total).toBe(30);
      const items = await batches.listItems(batch.id, 0, 100);
      expect(items.map((item) => item.custom_id)).toEqual(
        Array.from({ length: 30 }, (_, index) => `c${index}`),
      );
    } finally {
      await single.close();
    }
  });

  it('writes the directory store as it reads: at most one piece ahead of the disk', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'switchboard-dir-stream-'));
    try {
      const store = new BatchFiles({ db: database.db, store: folder, clock, limits });
      const id = 'file-directory-stream';
      let ahead = 0;
      const lines = (async function* () {
        for (let index = 0; index < 200; index++) {
          const onDisk = (() => {
            try {
              return statSync(join(folder, `${id}.partial`)).size;
            } catch {
              return 0;
            }
          })();
          ahead = Math.max(ahead, index * 4097 - onDisk);
          yield 'd'.repeat(4096);
        }
      })();
      const record = await store.writeOutput(owner, 'dir.jsonl', lines, id);
      expect(record.bytes).toBe(200 * 4097);
      expect(ahead).toBeLessThanOrEqual(64 * 1024 + 4097);
      expect(statSync(join(folder, id)).size).toBe(200 * 4097);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
