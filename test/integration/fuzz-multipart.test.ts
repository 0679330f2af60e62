/**
 * Multipart parsing, fuzzed (issue 18): the upload routes (transcriptions, batch files) get arbitrary
 * multipart/form-data bodies (random boundaries, random parts and part headers, the file field
 * repeated or missing, truncated bodies, boundaries that do not match the header, bare LF line ends,
 * arbitrary bytes) and answer a 2xx or a 4xx in the error envelope: never a 5xx, nothing stored on a
 * refusal, and no spooled file left behind (the spool is watched in a private TMPDIR).
 * A failure prints its seed and path: FUZZ_SEED=… FUZZ_PATH=… replays it.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPOOL_PREFIX } from '../../src/http/uploads/spool-area.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { fuzzParameters } from '../support/fuzz-parameters.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const yaml = `
model_list:
  - model_name: demo
    params: { provider: fake, model: demo }
    model_info: { id: demo-fake }
`;

const token = fc.stringMatching(/^[A-Za-z0-9'()+_,\-./:=?]{1,70}$/);
const fieldName = fc.constantFrom(
  'file',
  'model',
  'purpose',
  'language',
  'response_format',
  'prompt',
  'x',
  '',
  'file"; filename="a',
);
const partBody = fc.oneof(
  fc.constantFrom(
    'demo',
    'batch',
    'json',
    '',
    '\u0000',
    '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{}}\n',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
);
const part = fc.record({
  name: fieldName,
  filename: fc.option(fc.constantFrom('a.wav', 'in.jsonl', '', '../../etc/passwd', 'x\u0000y', 'é.mp3'), {
    nil: undefined,
  }),
  contentType: fc.option(
    fc.constantFrom('audio/wav', 'application/jsonl', 'text/plain', '', 'multipart/mixed'),
    {
      nil: undefined,
    },
  ),
  extraHeader: fc.option(
    fc.constantFrom('Content-Transfer-Encoding: base64', 'X: y', 'Content-Disposition: inline', 'broken'),
    {
      nil: undefined,
    },
  ),
  body: partBody,
});

interface Form {
  headerBoundary: string | undefined;
  payload: Buffer;
}

type Part = typeof part extends fc.Arbitrary<infer P> ? P : never;

interface FormShape {
  boundary: string;
  otherBoundary: string | undefined;
  parts: Part[];
  newline: string;
  closed: boolean;
  cut: number | undefined;
  preamble: string;
}

function toForm({ boundary, otherBoundary, parts, newline, closed, cut, preamble }: FormShape): Form {
  let text = preamble;
  for (const p of parts) {
    text += `--${boundary}${newline}Content-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) text += `; filename="${p.filename}"`;
    text += newline;
    if (p.contentType !== undefined) text += `Content-Type: ${p.contentType}${newline}`;
    if (p.extraHeader !== undefined) text += `${p.extraHeader}${newline}`;
    text += `${newline}${p.body}${newline}`;
  }
  if (closed) text += `--${boundary}--${newline}`;
  const bytes = Buffer.from(text, 'latin1');
  const payload = cut === undefined ? bytes : bytes.subarray(0, cut % (bytes.length + 1));
  return { headerBoundary: otherBoundary ?? boundary, payload };
}

const preamble = fc.constantFrom('', 'preamble\r\n', '\r\n');
const forms: fc.Arbitrary<Form> = fc
  .record({
    boundary: token,
    otherBoundary: fc.option(token, { nil: undefined }),
    parts: fc.array(part, { maxLength: 5 }),
    newline: fc.constantFrom('\r\n', '\n'),
    closed: fc.boolean(),
    cut: fc.option(fc.nat(), { nil: undefined }),
    preamble,
  })
  .map(toForm);
/** Forms the parser accepts whole (the boundary of the header, CRLF, closed, not cut): they reach the fields. */
const wellFormedForms: fc.Arbitrary<Form> = fc
  .record({ boundary: token, parts: fc.array(part, { minLength: 1, maxLength: 5 }), preamble })
  .map(({ boundary, parts, preamble }) =>
    toForm({
      boundary,
      otherBoundary: undefined,
      parts,
      newline: '\r\n',
      closed: true,
      cut: undefined,
      preamble,
    }),
  );
const bodies = fc.oneof(
  { weight: 5, arbitrary: forms },
  { weight: 3, arbitrary: wellFormedForms },
  {
    weight: 1,
    arbitrary: fc.record({
      headerBoundary: fc.option(token, { nil: undefined }),
      payload: fc.uint8Array({ maxLength: 400 }).map((bytes) => Buffer.from(bytes)),
    }),
  },
);

describe('multipart parsing under arbitrary bodies (issue 18: 4xx not 5xx, nothing stored, no spool left)', () => {
  const previousTmpdir = process.env.TMPDIR;
  let spoolParent: string;
  let backend: Backend;
  let gateway: TestGateway;

  beforeAll(async () => {
    // The spool roots go under os.tmpdir(), read when a root is made: a private one shows only ours.
    spoolParent = mkdtempSync(join(tmpdir(), 'switchboard-fuzz-spool-'));
    process.env.TMPDIR = spoolParent;
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend, yaml, batches: true });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
    if (previousTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previousTmpdir;
    rmSync(spoolParent, { recursive: true, force: true });
  });

  /** Files under the spool parent (the per-process roots themselves may stay until close). */
  const spooledFiles = () =>
    readdirSync(spoolParent, { recursive: true, withFileTypes: true }).filter(
      (entry) => !entry.isDirectory() && entry.parentPath.includes(SPOOL_PREFIX),
    );

  /** The spool is emptied when the request ends; the close event may come just after the answer. */
  async function expectSpoolEmpty(): Promise<void> {
    const deadline = Date.now() + 2_000;
    while (spooledFiles().length > 0 && Date.now() < deadline) await delay(10);
    expect(spooledFiles().map((entry) => entry.name)).toEqual([]);
  }

  const storedFiles = async () =>
    Number(
      (
        await gateway.gateway.database.db
          .selectFrom('batch_files')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it.each(['/v1/audio/transcriptions', '/v1/files'])(
    '%s',
    async (url) => {
      const outcomes = new Set<string>();
      await fc.assert(
        fc.asyncProperty(
          bodies,
          fc.constantFrom('multipart/form-data', 'multipart/form-data; charset=utf-8'),
          async (body, type) => {
            const before = await storedFiles();
            const response = await gateway.gateway.app.inject({
              method: 'POST',
              url,
              headers: {
                authorization: `Bearer ${gateway.masterKey}`,
                'content-type':
                  body.headerBoundary === undefined ? type : `${type}; boundary=${body.headerBoundary}`,
              },
              payload: body.payload,
            });
            expect(response.statusCode, response.body.slice(0, 300)).toBeLessThan(500);
            outcomes.add(`${response.statusCode} ${response.json().error?.param ?? ''}`);
            await expectSpoolEmpty();
            if (response.statusCode < 400) return;
            const answer = response.json();
            expect(answer.error?.message, response.body.slice(0, 300)).toBeTypeOf('string');
            expect(answer.error?.type).toBeTypeOf('string');
            expect(await storedFiles(), 'a refused upload was stored').toBe(before);
          },
        ),
        fuzzParameters(80),
      );
      // The bodies reach past the parser: some refusals name a field, not only a malformed form. A third of
      // the bodies are well-formed, so every seed has some (a CI seed once had none when only a random
      // tenth were); how many different fields depends on the seed, so only their presence is asserted.
      expect(
        [...outcomes].some((outcome) => /^\d+ \S/.test(outcome)),
        [...outcomes].join(', '),
      ).toBe(true);
    },
    60_000,
  );
});
