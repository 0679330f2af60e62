/**
 * Batch files (docs/batches.md) through a real gateway with batches turned on by the test-only switch,
 * on SQLite and PostgreSQL: the openai SDK's files.create / retrieve / content / list / delete, hostile
 * input files refused with the line and field named and nothing stored (no row, chunk or pending mark),
 * and visibility between teams.
 */
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

const goodFile = `${line('a')}\n${line('b')}\n`;

describe.each(await availableBackends())('batch files on %s', (_name, makeBackend) => {
  let backend: Backend;
  let gateway: TestGateway;
  let teamA1: OpenAI;
  let teamA2: OpenAI;
  let teamB: OpenAI;
  let solo: OpenAI;
  let soloSecret: string;
  let master: OpenAI;
  const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });

  beforeAll(async () => {
    backend = makeBackend();
    gateway = await startTestGateway({ backend, batches: true });
    for (const team_id of ['team-a', 'team-b']) {
      const created = await gateway.admin('POST', '/ui/api/teams', { team_id });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    teamA1 = client(await gateway.createKey({ team_id: 'team-a' }));
    teamA2 = client(await gateway.createKey({ team_id: 'team-a' }));
    teamB = client(await gateway.createKey({ team_id: 'team-b' }));
    soloSecret = await gateway.createKey({});
    solo = client(soloSecret);
    master = client(gateway.masterKey);
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  /**
   * Rows, chunks and pending marks of uploaded files (not of the output files, `file-batch_…`, a batch
   * of another test may be writing meanwhile): anything an upload stored, whole or in part.
   */
  async function storedRows(): Promise<number> {
    const { db } = gateway.gateway.database;
    const count = async (table: 'batch_files' | 'batch_file_chunks' | 'batch_file_pending') => {
      const column = table === 'batch_files' ? 'id' : 'file_id';
      const row = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where(column, 'not like', 'file-batch%')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    return (
      (await count('batch_files')) + (await count('batch_file_chunks')) + (await count('batch_file_pending'))
    );
  }

  it('uploads, retrieves, downloads, lists and deletes with the openai SDK', async () => {
    const file = await teamA1.files.create({
      file: await toFile(Buffer.from(goodFile), 'input.jsonl'),
      purpose: 'batch',
    });
    expect(file).toMatchObject({
      object: 'file',
      bytes: Buffer.byteLength(goodFile),
      filename: 'input.jsonl',
      purpose: 'batch',
      status: 'processed',
    });
    expect(file.id).toMatch(/^file-[0-9A-Za-z]{24}$/);
    expect(Math.abs(file.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(await teamA1.files.retrieve(file.id)).toEqual(file);
    expect(await (await teamA1.files.content(file.id)).text()).toBe(goodFile);
    const listed = await teamA1.files.list();
    expect(listed.data.map((entry) => entry.id)).toContain(file.id);
    expect(await teamA1.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    await expect(teamA1.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(teamA1.files.content(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(teamA1.files.delete(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it('shows a file to its team, or to its key when the key has no team; the master key sees all', async () => {
    const teamFile = await teamA1.files.create({
      file: await toFile(Buffer.from(goodFile), 'a.jsonl'),
      purpose: 'batch',
    });
    const soloFile = await solo.files.create({
      file: await toFile(Buffer.from(goodFile), 's.jsonl'),
      purpose: 'batch',
    });
    expect((await teamA2.files.retrieve(teamFile.id)).id).toBe(teamFile.id);
    await expect(teamB.files.retrieve(teamFile.id)).rejects.toMatchObject({ status: 404 });
    await expect(solo.files.retrieve(teamFile.id)).rejects.toMatchObject({ status: 404 });
    await expect(teamA1.files.retrieve(soloFile.id)).rejects.toMatchObject({ status: 404 });
    await expect(client(await gateway.createKey({})).files.retrieve(soloFile.id)).rejects.toMatchObject({
      status: 404,
    });
    await expect(teamB.files.content(teamFile.id)).rejects.toMatchObject({ status: 404 });
    await expect(teamB.files.delete(teamFile.id)).rejects.toMatchObject({ status: 404 });
    const ids = async (caller: OpenAI) => (await caller.files.list()).data.map((entry) => entry.id);
    expect(await ids(teamA2)).toContain(teamFile.id);
    expect(await ids(teamA2)).not.toContain(soloFile.id);
    expect(await ids(teamB)).not.toContain(teamFile.id);
    expect(await ids(solo)).toEqual([soloFile.id]);
    expect(await ids(master)).toEqual(expect.arrayContaining([teamFile.id, soloFile.id]));
    expect((await teamA2.files.delete(teamFile.id)).deleted).toBe(true);
  });

  it('pages the list newest first with after and limit', async () => {
    const caller = client(await gateway.createKey({}));
    const created: string[] = [];
    for (let index = 0; index < 3; index++)
      created.push(
        (
          await caller.files.create({
            file: await toFile(Buffer.from(goodFile), `${index}.jsonl`),
            purpose: 'batch',
          })
        ).id,
      );
    const all = (await caller.files.list()).data.map((entry) => entry.id);
    expect([...all].sort()).toEqual([...created].sort());
    const first = await fetchJson(`/v1/files?limit=2`, caller.apiKey as string);
    expect(first.data.map((entry: { id: string }) => entry.id)).toEqual(all.slice(0, 2));
    expect(first).toMatchObject({ object: 'list', has_more: true, first_id: all[0], last_id: all[1] });
    const second = await fetchJson(`/v1/files?limit=2&after=${first.last_id}`, caller.apiKey as string);
    expect(second.data.map((entry: { id: string }) => entry.id)).toEqual(all.slice(2));
    expect(second.has_more).toBe(false);
  });

  const hostile: Array<[string, string | Buffer, RegExp, string | null]> = [
    [
      'an invalid JSON line',
      `${line('a')}\n{"custom_id": "b",\n`,
      /^Line 2: the line is not valid JSON/,
      'line 2',
    ],
    [
      'a duplicate custom_id',
      `${line('a')}\n${line('b')}\n${line('a')}\n`,
      /^Line 3, field custom_id: custom_id 'a' is used by an earlier line/,
      'line 3: custom_id',
    ],
    [
      'a missing custom_id',
      `${JSON.stringify({ method: 'POST', url: '/v1/embeddings', body: { model: 'demo' } })}\n`,
      /^Line 1, field custom_id/,
      'line 1: custom_id',
    ],
    [
      'a wrong url',
      `${line('a', { url: '/v1/images/generations' })}\n`,
      /^Line 1, field url: url must be one of \/v1\/embeddings, \/v1\/chat\/completions/,
      'line 1: url',
    ],
    ['a wrong method', `${line('a', { method: 'GET' })}\n`, /^Line 1, field method/, 'line 1: method'],
    [
      'a body without model',
      `${line('a', { body: { input: 'x' } })}\n`,
      /^Line 1, field body.model/,
      'line 1: body.model',
    ],
    [
      'a streaming chat item',
      `${line('a', { url: '/v1/chat/completions', body: { model: 'demo', messages: [], stream: true } })}\n`,
      /^Line 1, field body.stream: batch requests cannot stream/,
      'line 1: body.stream',
    ],
    [
      'a chat item with MCP tools',
      `${line('a', {
        url: '/v1/chat/completions',
        body: {
          model: 'demo',
          messages: [],
          tools: [
            { type: 'function', function: { name: 'f' } },
            { type: 'mcp', server_label: 'x' },
          ],
        },
      })}\n`,
      /^Line 1, field body.tools\[1\].type: MCP tools/,
      'line 1: body.tools[1].type',
    ],
    [
      'a NUL byte',
      Buffer.concat([Buffer.from(`${line('a')}\n{"custom_id":"b\u0000"}\n`)]),
      /^Line 2: the line holds a NUL byte/,
      'line 2',
    ],
    [
      'an escaped NUL character',
      `${line('a')}\n${line('b', { body: { model: 'demo', input: 'x\\u0000' } }).replace('\\\\u0000', '\\u0000')}\n`,
      /^Line 2, field body.input: the value holds a NUL character/,
      'line 2: body.input',
    ],
    [
      'invalid UTF-8',
      Buffer.concat([Buffer.from(`${line('a')}\n`), Buffer.from([0xff, 0xfe, 0x0a])]),
      /^Line 2: the line is not valid UTF-8/,
      'line 2',
    ],
    [
      'a line that is not an object',
      `${line('a')}\n[1,2]\n`,
      /^Line 2: the line must be a JSON object/,
      'line 2',
    ],
    [
      'a line nested 200,000 levels deep (it once passed here and overflowed the stack at batch creation)',
      `${line('a')}\n{"custom_id":"b","method":"POST","url":"/v1/embeddings","body":{"model":"demo","input":${'['.repeat(200_000)}${']'.repeat(200_000)}}}\n`,
      /^Line 2: the line nests arrays and objects deeper than 65 levels \(a request body may nest 64/,
      'line 2',
    ],
    ['an empty file', '\n\n', /holds no request/, 'file'],
  ];

  it.each(hostile)(
    'refuses %s with 400 naming the line and field, storing nothing',
    async (_label, content, message, param) => {
      const before = await storedRows();
      const error = await teamA1.files
        .create({
          file: await toFile(typeof content === 'string' ? Buffer.from(content) : content, 'bad.jsonl'),
          purpose: 'batch',
        })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 400, param });
      expect((error as { error: { message: string } }).error.message).toMatch(message);
      expect(await storedRows()).toBe(before);
    },
  );

  it('accepts a body nested as deep as a synchronous request may be (64 levels) and creates its batch', async () => {
    // body (1 level) + input nested 63 arrays deep: the bound of a synchronous body, not one past it.
    const deep = `${'['.repeat(63)}"x"${']'.repeat(63)}`;
    const text = `{"custom_id":"d","method":"POST","url":"/v1/embeddings","body":{"model":"demo","input":${deep}}}\n`;
    const file = await solo.files.create({
      file: await toFile(Buffer.from(text), 'deep.jsonl'),
      purpose: 'batch',
    });
    const batch = await solo.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/embeddings',
      completion_window: '24h',
    });
    expect(batch).toMatchObject({ status: 'validating', request_counts: { total: 1 } });
  });

  it('refuses more than 50,000 requests, naming the line past the limit', async () => {
    const before = await storedRows();
    const many = `${Array.from({ length: 50_001 }, (_, index) => line(`c${index}`)).join('\n')}\n`;
    const error = await solo.files
      .create({ file: await toFile(Buffer.from(many), 'many.jsonl'), purpose: 'batch' })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, param: 'line 50001' });
    expect((error as Error).message).toMatch(/more than 50000 requests/);
    expect(await storedRows()).toBe(before);
  });

  it('refuses a line longer than one request body may be, naming its setting', async () => {
    const huge = `${line('a')}\n${line('b', { body: { model: 'demo', input: 'x'.repeat(10 * 1024 * 1024) } })}\n`;
    const error = await solo.files
      .create({ file: await toFile(Buffer.from(huge), 'huge.jsonl'), purpose: 'batch' })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, param: 'line 2' });
    expect((error as Error).message).toMatch(/longer than 10485760 bytes.*max_request_body_bytes/);
  });

  it('refuses another purpose, a missing file, an unknown field and a body that is not multipart', async () => {
    const before = await storedRows();
    await expect(
      solo.files.create({ file: await toFile(Buffer.from(goodFile), 'x.jsonl'), purpose: 'fine-tune' }),
    ).rejects.toMatchObject({ status: 400, param: 'purpose' });
    const form = new FormData();
    form.set('purpose', 'batch');
    expect(await post(form)).toMatchObject({ status: 400, param: 'file' });
    const extra = new FormData();
    extra.set('purpose', 'batch');
    extra.set('expires_after', 'soon');
    extra.set('file', new Blob([goodFile]), 'x.jsonl');
    expect(await post(extra)).toMatchObject({ status: 400, param: 'expires_after' });
    const json = await fetch(`${gateway.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${soloSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ purpose: 'batch', file: goodFile }),
    });
    expect(json.status).toBe(415);
    expect(await storedRows()).toBe(before);
  });

  it('answers 401 without a key, and 404 for an unknown id', async () => {
    expect((await fetch(`${gateway.baseUrl}/v1/files`)).status).toBe(401);
    await expect(solo.files.retrieve('file-doesnotexist')).rejects.toMatchObject({ status: 404 });
  });

  async function post(form: FormData): Promise<{ status: number; param: unknown }> {
    const response = await fetch(`${gateway.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${soloSecret}` },
      body: form,
    });
    const body = (await response.json()) as { error: { param: unknown } };
    return { status: response.status, param: body.error.param };
  }

  async function fetchJson(path: string, key: string) {
    const response = await fetch(gateway.baseUrl + path, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as any;
  }
});
