/**
 * Every JSON body decoder, fuzzed (issue 18): for each POST/PUT/PATCH route that takes a body (read
 * from the gateway's own OpenAPI document, so a new route is fuzzed without editing this file),
 * arbitrary JSON values, objects made of the route's own field names with hostile values, arbitrary
 * bytes, truncated JSON, deep nesting, huge numbers, NUL bytes, lone surrogates and wrong content
 * types give a 4xx in the error envelope (or a 2xx when the input happens to be valid): never a 5xx,
 * never a crash, and a rejected request stores nothing (no row in any table, spend included).
 * Runs on PostgreSQL when it is there (NUL bytes and encodings are where it differs), else SQLite.
 * A failure prints fast-check's seed and path: FUZZ_SEED=… FUZZ_PATH=… replays it.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, postgresBackend, sqliteBackend } from '../support/backends.ts';
import { fuzzParameters } from '../support/fuzz-parameters.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';
import { realBackendsAvailable } from '../support/test-env.ts';

const yaml = `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo }
    model_info: { id: demo-fake }
  - model_name: demo-embedding
    params: { provider: fake, model: demo-embedding }
    model_info: { id: demo-fake-embedding, mode: embedding }
`;

/** Multipart routes have their own fuzz test (fuzz-multipart); everything else that takes a body is here. */
const MULTIPART_ROUTES = new Set([
  '/v1/files',
  '/files',
  '/v1/audio/transcriptions',
  '/audio/transcriptions',
]);

interface BodyRoute {
  method: 'POST' | 'PUT' | 'PATCH';
  url: string;
  fields: string[];
}

/** A body for one request: its bytes and the content type it is sent with (none when undefined). */
interface FuzzBody {
  payload: string | Buffer;
  contentType: string | undefined;
}

const hostileValue = fc.constantFrom<unknown>(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  1e308,
  -1e308,
  5e-324,
  -0,
  Number.MAX_SAFE_INTEGER + 2,
  '9'.repeat(400),
  '',
  ' ',
  [],
  {},
  null,
  true,
  'demo',
  'demo-embedding',
  [{ role: 'user', content: 'hi' }],
  [{ role: 'user', content: '\u0000' }],
  { __proto__: null, constructor: { prototype: {} } },
);
const anyValue = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 2, arbitrary: hostileValue },
);

/** Text that is JSON-like but hostile at the byte level: raw, not produced by JSON.stringify. */
const rawTexts = fc.constantFrom(
  '1e99999',
  '-1e99999',
  '123456789012345678901234567890123456789012345678901234567890',
  `{"model":${'9'.repeat(5000)}}`,
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
  '{"model":"demo"\u0000}',
  '\u0000',
  '{"model":"\\ud800","messages":[{"role":"user","content":"\\udfff"}]}',
  '{"model":"demo","model":"demo","messages":[]}',
  '{"__proto__":{"admin":true},"model":"demo"}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '',
  ' ',
  'null',
  '"string"',
  '{',
  '{"model":',
  '\ufeff{"model":"demo"}',
);
/** Invalid UTF-8 inside a string (a lone surrogate encoded, a truncated sequence, an overlong NUL). */
const invalidUtf8 = fc
  .constantFrom([0xed, 0xa0, 0x80], [0xc3], [0xc0, 0x80], [0xff, 0xfe], [0xf4, 0x90, 0x80, 0x80])
  .map((bytes) =>
    Buffer.concat([Buffer.from('{"model":"demo","input":"'), Buffer.from(bytes), Buffer.from('"}')]),
  );
const contentTypes = fc.constantFrom<string | undefined>(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/octet-stream',
  'application/json, text/plain',
  undefined,
);

function bodies(route: BodyRoute): fc.Arbitrary<FuzzBody> {
  const fieldNames = fc.constantFrom(...route.fields, 'model', 'stream', 'extra');
  const shaped = fc
    .dictionary(fieldNames, anyValue, { maxKeys: 6 })
    .map((fields) => JSON.stringify({ model: 'demo', ...fields }));
  const json = fc.oneof(
    { weight: 4, arbitrary: shaped },
    { weight: 2, arbitrary: anyValue.map((value) => JSON.stringify(value) ?? 'null') },
    {
      weight: 1,
      arbitrary: shaped.chain((text) => fc.nat(text.length - 1).map((cut) => text.slice(0, cut))),
    },
    { weight: 1, arbitrary: rawTexts },
  );
  const asJson = (payload: string | Buffer): FuzzBody => ({ payload, contentType: 'application/json' });
  return fc.oneof(
    { weight: 6, arbitrary: json.map(asJson) },
    { weight: 1, arbitrary: invalidUtf8.map(asJson) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => asJson(Buffer.from(bytes))) },
    {
      weight: 2,
      arbitrary: fc.record({ payload: json, contentType: contentTypes }),
    },
  );
}

describe('JSON body decoders under arbitrary input (issue 18: a 4xx with the envelope, never a 5xx, nothing stored)', async () => {
  const postgres = await realBackendsAvailable();
  let backend: Backend;
  let gateway: TestGateway;
  let countRows: () => Promise<string>;
  /** The row counts after the last request (one snapshot per request: the next one compares to it). */
  let stored: string;
  /** Request ids of every refused request, to look for spend rows once everything has settled. */
  const refusedIds: string[] = [];

  beforeAll(async () => {
    backend = postgres ? postgresBackend() : sqliteBackend();
    gateway = await startTestGateway({ backend, yaml, batches: true });
    countRows = await rowCounter(gateway, backend.schema);
    stored = await countRows();
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  it('finds the body routes in the OpenAPI document (every proxy and admin family is there)', () => {
    const urls = bodyRoutes(gateway).map((route) => route.url);
    for (const expected of [
      '/v1/chat/completions',
      '/v1/completions',
      '/v1/responses',
      '/v1/messages',
      '/v1/embeddings',
      '/v1/images/generations',
      '/v1/rerank',
      '/v1/audio/speech',
      '/v1/batches',
      '/mcp',
      '/ui/api/keys',
      '/ui/api/mcp-servers',
      '/ui/api/settings',
      '/key/generate',
    ])
      expect(urls).toContain(expected);
  });

  // Computed from a gateway of the same configuration; the tests below use the shared one.
  const routes = await listedRoutes();
  it.each(routes.map((route) => [`${route.method} ${route.url}`, route] as const))(
    '%s: arbitrary bodies give 2xx or an enveloped 4xx, and a rejection stores nothing',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(bodies(route), async (body) => {
          const response = await gateway.gateway.app.inject({
            method: route.method,
            url: route.url.replace(/\{[^}]+\}/g, 'fuzz-id'),
            headers: {
              authorization: `Bearer ${gateway.masterKey}`,
              ...(body.contentType ? { 'content-type': body.contentType } : {}),
            },
            payload: body.payload,
          });
          const before = stored;
          stored = await countRows();
          expect(response.statusCode, response.body.slice(0, 300)).toBeLessThan(500);
          if (response.statusCode < 400) return;
          refusedIds.push(String(response.headers['x-request-id']));
          const answer = response.json();
          if (route.url === '/mcp') expect(answer.error ?? answer).toBeTypeOf('object');
          else {
            expect(answer.error?.message, response.body.slice(0, 300)).toBeTypeOf('string');
            expect(answer.error?.type, response.body.slice(0, 300)).toBeTypeOf('string');
          }
          expect(stored, 'a rejected request stored something').toBe(before);
        }),
        fuzzParameters(25),
      );
    },
    60_000,
  );

  it('wrote no spend row for any refused request, also later (spend is written after the answer)', async () => {
    expect(refusedIds.length).toBeGreaterThan(100);
    const charged = await gateway.gateway.database.db
      .selectFrom('spend_logs')
      .select('request_id')
      .where('request_id', 'in', refusedIds)
      .execute();
    expect(charged).toEqual([]);
  });
});

/** The routes whose bodies are decoded here, read from a throwaway gateway's OpenAPI document. */
async function listedRoutes(): Promise<BodyRoute[]> {
  const backend = sqliteBackend();
  const gateway = await startTestGateway({ backend, yaml, batches: true });
  try {
    return bodyRoutes(gateway);
  } finally {
    await gateway.close();
    await backend.cleanup();
  }
}

function bodyRoutes(gateway: TestGateway): BodyRoute[] {
  const document = gateway.gateway.app.swagger() as {
    paths: Record<
      string,
      Record<string, { requestBody?: { content?: Record<string, { schema?: { properties?: object } }> } }>
    >;
  };
  const routes: BodyRoute[] = [];
  const paths = Object.keys(document.paths);
  for (const [url, operations] of Object.entries(document.paths)) {
    // LiteLLM's unprefixed twins (/chat/completions …) share the /v1 route's handler and schema.
    if (MULTIPART_ROUTES.has(url) || (!url.startsWith('/v') && url !== '/mcp' && paths.includes(`/v1${url}`)))
      continue;
    for (const [method, operation] of Object.entries(operations)) {
      if (!['post', 'put', 'patch'].includes(method)) continue;
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      routes.push({
        method: method.toUpperCase() as BodyRoute['method'],
        url,
        fields: Object.keys(schema?.properties ?? {}),
      });
    }
  }
  return routes;
}

/** Counts the rows of every table in one statement (a snapshot to compare around a rejected request). */
async function rowCounter(gateway: TestGateway, schema: string | undefined): Promise<() => Promise<string>> {
  const db = gateway.gateway.database.db;
  // Only this gateway's schema is listed: introspecting every schema fails when another test drops its
  // schema meanwhile. Spend is written after an answer, asynchronously (a 2xx's row may land during the
  // next request): its tables are checked by request id at the end instead.
  const listed =
    schema === undefined
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = ${schema} and table_type = 'BASE TABLE'`.execute(db);
  const tables = listed.rows
    .map((row) => ({ name: row.name, schema }))
    .filter(
      (table) =>
        !table.name.startsWith('kysely_') &&
        !table.name.startsWith('spend_') &&
        !table.name.startsWith('sqlite_'),
    );
  const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const counts = tables
    .map(
      (table) =>
        `(SELECT count(*) FROM ${table.schema ? `${quoted(table.schema)}.` : ''}${quoted(table.name)})`,
    )
    .join(` || ',' || `);
  const statement = sql.raw<{ counts: string }>(`SELECT ${counts} AS counts`);
  return async () => String((await statement.execute(db)).rows[0]?.counts);
}
