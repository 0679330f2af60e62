/**
 * Batch file transfers through a real gateway (issue 25), on SQLite and PostgreSQL, with the default
 * `database` store: a file of several chunks downloads byte for byte with the openai SDK, multi-byte
 * characters at chunk boundaries kept whole; a form that stops in the middle of the file is a 400 and a
 * client that disconnects mid-upload leaves nothing (no row, chunk or pending mark).
 */
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const line = (customId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/embeddings',
    body: { model: 'demo', input: `text ${customId}` },
    ...extra,
  });

/** Polls until `check` holds, failing after ten seconds (no fixed sleeps). */
async function eventually(check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check(); await delay(20))
    if (Date.now() > deadline) throw new Error('the condition did not hold within ten seconds');
}

describe.each(await availableBackends())('batch file transfers on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let solo: OpenAI;
  let soloSecret: string;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, batches: true });
    soloSecret = await gateway.createKey({});
    solo = new OpenAI({ apiKey: soloSecret, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  /** Rows, chunks and pending marks of files: anything an upload stored, whole or in part. */
  async function storedRows(): Promise<number> {
    const { db } = gateway.gateway.database;
    const count = async (table: 'batch_files' | 'batch_file_chunks' | 'batch_file_pending') =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return (
      (await count('batch_files')) + (await count('batch_file_chunks')) + (await count('batch_file_pending'))
    );
  }

  it('downloads a file of several chunks byte for byte, multi-byte characters at chunk boundaries kept whole', async () => {
    // Lines of two-, three- and four-byte characters, past three 32 KiB chunks; offsets shifted so
    // characters straddle the chunk boundaries.
    const lines = Array.from({ length: 200 }, (_, index) =>
      line(`m${index}`, { body: { model: 'demo', input: `${'·'.repeat(index % 3)}é€😀`.repeat(60) } }),
    );
    const bytes = Buffer.from(`${lines.join('\n')}\n`);
    const file = await solo.files.create({ file: await toFile(bytes, 'utf8.jsonl'), purpose: 'batch' });
    expect(file.bytes).toBe(bytes.length);
    const chunks = await gateway.gateway.database.db
      .selectFrom('batch_file_chunks')
      .select('data')
      .where('file_id', '=', file.id)
      .orderBy('seq')
      .execute();
    const sizes = chunks.map((chunk) => Buffer.byteLength(chunk.data));
    expect(sizes.length).toBeGreaterThan(3);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(bytes.length);
    // A 32 KiB cut would have split a character: the chunk ended before it instead.
    expect(sizes.slice(0, -1).some((size) => size < 32 * 1024)).toBe(true);
    const downloaded = Buffer.from(await (await solo.files.content(file.id)).arrayBuffer());
    expect(downloaded.equals(bytes)).toBe(true);
  });

  it('refuses a body whose form stops in the middle of the file, storing nothing', async () => {
    const before = await storedRows();
    const boundary = 'cut-boundary';
    const content = Buffer.from(
      `${Array.from({ length: 2_000 }, (_, index) => line(`cut${index}`)).join('\n')}\n`,
    );
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.jsonl"\r\n` +
        'Content-Type: application/jsonl\r\n\r\n',
    );
    // The body ends mid-line, mid-chunk, without the closing boundary.
    const body = Buffer.concat([head, content.subarray(0, 50_001)]);
    const response = await fetch(`${gateway.baseUrl}/v1/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${soloSecret}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body,
    });
    expect(response.status).toBe(400);
    expect(await storedRows()).toBe(before);
  });

  it('stores nothing, whole or in part, for a client that disconnects mid-upload', async () => {
    const before = await storedRows();
    const roots = () =>
      readdirSync(tmpdir())
        .filter((name) => name.startsWith(`switchboard-upload-${process.pid}-`))
        .flatMap((root) => readdirSync(join(tmpdir(), root)).map((name) => join(root, name)));
    const spooling = new Set(roots());
    const boundary = 'gone-boundary';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="gone.jsonl"\r\n\r\n`;
    const { port } = new URL(gateway.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${soloSecret}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10000000\r\n\r\n${head}`,
    );
    socket.write(`${Array.from({ length: 2_000 }, (_, index) => line(`gone${index}`)).join('\n')}\n`);
    // The upload is being spooled (its request folder exists); then the client goes away.
    await eventually(() => roots().some((folder) => !spooling.has(folder)));
    socket.destroy();
    await eventually(() => roots().every((folder) => spooling.has(folder)));
    expect(await storedRows()).toBe(before);
    expect((await solo.files.list()).data.map((entry) => entry.filename)).not.toContain('gone.jsonl');
  });
});
