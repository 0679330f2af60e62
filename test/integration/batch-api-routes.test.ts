/**
 * The file and batch API's own rules (issue 15), on SQLite and PostgreSQL, with the batch worker
 * stopped so batches stay where the API put them: every route also answers without /v1; GET /files
 * serves order=asc and desc; list parameters out of range, junk or holding NUL bytes are a 400 naming
 * the field; answers carry exactly OpenAI's fields; a 5,000-line file becomes a batch with the right
 * counts, and a refusal at its last line leaves no batch and no item behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const embedLine = (id: string, url = '/v1/embeddings') =>
  JSON.stringify({ custom_id: id, method: 'POST', url, body: { model: 'demo', input: `text ${id}` } });

const FILE_FIELDS = [
  'bytes',
  'created_at',
  'expires_at',
  'filename',
  'id',
  'object',
  'purpose',
  'status',
  'status_details',
];
const BATCH_FIELDS = [
  'cancelled_at',
  'cancelling_at',
  'completed_at',
  'completion_window',
  'created_at',
  'endpoint',
  'error_file_id',
  'errors',
  'expired_at',
  'expires_at',
  'failed_at',
  'finalizing_at',
  'id',
  'in_progress_at',
  'input_file_id',
  'metadata',
  'object',
  'output_file_id',
  'request_counts',
  'status',
];

describe.each(await availableBackends())('file and batch API routes on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, batches: true });
    await gateway.gateway.batchWorker?.stop();
    key = await gateway.createKey({});
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  async function call(method: string, path: string, body?: unknown, secret = key) {
    const response = await fetch(gateway.baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(body !== undefined && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
      },
      ...(body instanceof FormData ? { body } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const json = response.headers.get('content-type')?.startsWith('application/json');
    return { status: response.status, text, body: json ? JSON.parse(text) : undefined };
  }

  async function upload(lines: string[], path = '/v1/files', secret = key) {
    const form = new FormData();
    form.set('purpose', 'batch');
    form.set('file', new Blob([`${lines.join('\n')}\n`]), 'in.jsonl');
    const answer = await call('POST', path, form, secret);
    expect(answer.status, answer.text).toBe(200);
    return answer.body as { id: string };
  }

  const count = async (table: 'batches' | 'batch_items') =>
    Number(
      (
        await gateway.gateway.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('serves every file and batch route without the /v1 prefix too, with exactly OpenAI fields', async () => {
    const file = await upload([embedLine('a'), embedLine('b')], '/files');
    expect(Object.keys(file).sort()).toEqual(FILE_FIELDS);
    expect((await call('GET', `/files/${file.id}`)).body).toEqual(file);
    expect((await call('GET', `/files/${file.id}/content`)).text).toBe(
      `${embedLine('a')}\n${embedLine('b')}\n`,
    );
    expect((await call('GET', '/files')).body.data.map((entry: { id: string }) => entry.id)).toContain(
      file.id,
    );
    const created = await call('POST', '/batches', {
      input_file_id: file.id,
      endpoint: '/v1/embeddings',
      completion_window: '24h',
    });
    expect(created.status, created.text).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(BATCH_FIELDS);
    expect(created.body).toMatchObject({
      status: 'validating',
      request_counts: { total: 2, completed: 0, failed: 0 },
    });
    expect((await call('GET', `/batches/${created.body.id}`)).body).toEqual(created.body);
    const list = await call('GET', '/batches?limit=1');
    expect(list.body).toEqual({
      object: 'list',
      data: [created.body],
      first_id: created.body.id,
      last_id: created.body.id,
      has_more: false,
    });
    const cancelled = await call('POST', `/batches/${created.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelling');
    expect((await call('DELETE', `/files/${file.id}`)).body).toEqual({
      id: file.id,
      object: 'file',
      deleted: true,
    });
  });

  it('lists files oldest first with order=asc and newest first by default, paging with after', async () => {
    const own = await gateway.createKey({});
    const ids: string[] = [];
    for (const name of ['x', 'y', 'z']) ids.push((await upload([embedLine(name)], '/v1/files', own)).id);
    const page = async (query: string) => (await call('GET', `/v1/files?${query}`, undefined, own)).body;
    const ascending = (await page('order=asc')).data.map((entry: { id: string }) => entry.id);
    const descending = (await page('')).data.map((entry: { id: string }) => entry.id);
    expect([...ascending].sort()).toEqual([...ids].sort());
    expect(descending).toEqual([...ascending].reverse());
    expect((await page('order=desc')).data.map((entry: { id: string }) => entry.id)).toEqual(descending);
    const first = await page('order=asc&limit=2');
    expect(first).toMatchObject({ has_more: true, first_id: ascending[0], last_id: ascending[1] });
    const second = await page(`order=asc&limit=2&after=${first.last_id}`);
    expect(second.data.map((entry: { id: string }) => entry.id)).toEqual([ascending[2]]);
    expect(second.has_more).toBe(false);
  });

  it.each([
    ['/v1/files?limit=0', 'limit'],
    ['/v1/files?limit=10001', 'limit'],
    ['/v1/files?limit=ten', 'limit'],
    ['/v1/files?order=sideways', 'order'],
    ['/v1/files?after=..%2Fetc', 'after'],
    ['/v1/files?after=a%00b', 'after'],
    ['/v1/files?after=file-neverexisted', 'after'],
    ['/v1/files?purpose=b%00atch', 'purpose'],
    ['/v1/batches?limit=0', 'limit'],
    ['/v1/batches?limit=101', 'limit'],
    ['/v1/batches?limit=-3', 'limit'],
    ['/v1/batches?after=%27%20or%201%3D1', 'after'],
    ['/v1/batches?after=batch_%00', 'after'],
    ['/v1/batches?after=batch_neverexisted', 'after'],
  ])('refuses GET %s with a 400 naming %s', async (path, field) => {
    const answer = await call('GET', path);
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(answer.body.error.param).toBe(field);
  });

  it.each([
    ['an array body', [], null],
    ['a string body', 'batch', null],
    ['a NUL in input_file_id', { input_file_id: 'file-\u0000', endpoint: '/v1/embeddings' }, 'input_file_id'],
    ['a NUL in endpoint', { input_file_id: 'file-x', endpoint: '/v1/embeddings\u0000' }, 'endpoint'],
    ['a number as input_file_id', { input_file_id: 7, endpoint: '/v1/embeddings' }, 'input_file_id'],
    [
      'a NUL in metadata',
      { input_file_id: 'file-x', endpoint: '/v1/embeddings', metadata: { note: 'a\u0000b' } },
      'metadata.note',
    ],
    [
      'a metadata value that is not a string',
      { input_file_id: 'file-x', endpoint: '/v1/embeddings', metadata: { a: 1 } },
      'metadata.a',
    ],
  ])('refuses POST /v1/batches with %s as a 400, storing nothing', async (_label, body, param) => {
    const before = await count('batches');
    const answer = await call('POST', '/v1/batches', body);
    expect(answer.status, answer.text).toBe(400);
    if (param !== null) expect(answer.body.error.param).toBe(param);
    expect(await count('batches')).toBe(before);
  });

  it("refuses another key's batch or file as a cursor exactly like one that never existed", async () => {
    const file = await upload([embedLine('a')]);
    const batch = (await call('POST', '/v1/batches', { input_file_id: file.id, endpoint: '/v1/embeddings' }))
      .body;
    const stranger = await gateway.createKey({});
    for (const path of [`/v1/files?after=${file.id}`, `/v1/batches?after=${batch.id}`]) {
      const answer = await call('GET', path, undefined, stranger);
      expect(answer.status).toBe(400);
      expect(answer.body.error.param).toBe('after');
    }
  });

  it('creates a batch of 5,000 lines with every item stored, in 500-row chunks', async () => {
    const lines = Array.from({ length: 5_000 }, (_, index) => embedLine(`m${index}`));
    const file = await upload(lines);
    const itemsBefore = await count('batch_items');
    const created = await call('POST', '/v1/batches', { input_file_id: file.id, endpoint: '/v1/embeddings' });
    expect(created.status, created.text).toBe(200);
    expect(created.body.request_counts).toEqual({ total: 5_000, completed: 0, failed: 0 });
    expect(await count('batch_items')).toBe(itemsBefore + 5_000);
    const last = await gateway.gateway.database.db
      .selectFrom('batch_items')
      .select(['line_index', 'custom_id', 'status'])
      .where('batch_id', '=', created.body.id)
      .orderBy('line_index', 'desc')
      .executeTakeFirstOrThrow();
    expect({ ...last, line_index: Number(last.line_index) }).toEqual({
      line_index: 4_999,
      custom_id: 'm4999',
      status: 'pending',
    });
  });

  it('leaves no batch and no item when the last of 5,000 lines is refused (one transaction)', async () => {
    const lines = Array.from({ length: 4_999 }, (_, index) => embedLine(`k${index}`));
    lines.push(embedLine('k4999', '/v1/chat/completions'));
    const file = await upload(lines);
    const [batchesBefore, itemsBefore] = [await count('batches'), await count('batch_items')];
    const refused = await call('POST', '/v1/batches', { input_file_id: file.id, endpoint: '/v1/embeddings' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('url');
    expect(refused.body.error.message).toMatch(/^line 5000: url \/v1\/chat\/completions differs/);
    expect([await count('batches'), await count('batch_items')]).toEqual([batchesBefore, itemsBefore]);
  });
});
