/**
 * The disk side of POST /v1/audio/transcriptions uploads, against a running gateway: the process-wide
 * spool budget (general_settings.max_upload_spool_bytes) refusing a concurrent upload with 503 and
 * Retry-After (before its body is read when its length is announced, as soon as the running total
 * passes the budget when it is not) and giving the bytes back when the spool is deleted; our own disk
 * failing answered 500 without the temporary path (and logged), the spool root made again afterwards;
 * the start-up sweep of a crashed process's spool root; the process's root removed at close; and the
 * upload settings' bounds (max_upload_bytes ≥ max_request_body_bytes, max_upload_spool_bytes ≥
 * max_upload_bytes).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigError } from '../../src/config/config-error.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { SPOOL_PREFIX } from '../../src/http/uploads/spool-area.ts';
import { FakeOpenAiAudioServer } from '../fakes/fake-openai-audio-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { waitUntil } from '../support/provider-adapter-suite.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const KIB = 1024;
/** The largest file, and the budget of files spooled at once: one full upload fits, two do not. */
const MAX_UPLOAD = 256 * KIB;
const BOUNDARY = 'sbspoolboundary';

/** A pid no process has now (searched downwards from the kernel's default pid_max). */
function deadPid(): number {
  for (let pid = 4_194_000; pid > 1000; pid -= 97) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
  throw new Error('no free pid found');
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('transcription uploads on disk', () => {
  let backend: Backend;
  let upstream: FakeOpenAiAudioServer;
  let gateway: TestGateway | undefined;
  let key: string;
  let crashed: string;
  const logs: any[] = [];
  const roots = () => readdirSync(tmpdir()).filter((name) => name.startsWith(SPOOL_PREFIX));
  /** The uploads spooled now: the files in this process's request folders. */
  const spooledFiles = () =>
    roots().flatMap((root) =>
      readdirSync(join(tmpdir(), root)).map((folder) => join(tmpdir(), root, folder, 'upload')),
    );

  beforeAll(async () => {
    // A private temporary folder, so the test sees only its own spool roots.
    process.env.TMPDIR = mkdtempSync(join(tmpdir(), 'sb-spool-disk-'));
    // What a crashed gateway leaves behind: its root, with a half-written upload in it.
    crashed = `${SPOOL_PREFIX}${deadPid()}-crash1`;
    mkdirSync(join(tmpdir(), crashed, 'request-a'), { recursive: true });
    writeFileSync(join(tmpdir(), crashed, 'request-a', 'upload'), Buffer.alloc(4096));
    upstream = await FakeOpenAiAudioServer.start();
    backend = sqliteBackend();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        done();
      },
    });
    gateway = await startTestGateway({
      backend,
      logger: pino({ level: 'warn' }, sink),
      generalSettings: `  max_request_body_bytes: 65536\n  max_upload_bytes: ${MAX_UPLOAD}\n  max_upload_spool_bytes: ${MAX_UPLOAD}\n`,
      yaml: `
model_list:
  - model_name: whisper
    params: { provider: openai, model: whisper-1, api_base: "${upstream.baseUrl}", api_key: sk-upstream }
    model_info: { id: whisper-a, mode: audio_transcription }
`,
    });
    key = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  /** An upload whose length is announced (fetch sends Content-Length for a FormData body). */
  const announced = async (fileBytes: number): Promise<Response> => {
    const form = new FormData();
    form.append('model', 'whisper');
    form.append('response_format', 'json');
    form.append('file', new Blob([Buffer.alloc(fileBytes, 7)]), 'clip.wav');
    return fetch(`${gateway!.baseUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
  };

  /** A chunked upload (no announced length) whose file part is started; write more, then `finish`. */
  const chunked = (): { connection: ClientRequest; answered: Promise<Answer>; finish(): void } => {
    const connection = httpRequest(`${gateway!.baseUrl}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'transfer-encoding': 'chunked',
      },
    });
    const answered = new Promise<Answer>((resolve, reject) => {
      connection.on('response', (response) => {
        let body = '';
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      });
      connection.on('error', reject);
    });
    connection.write(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
    );
    const finish = () =>
      connection.end(
        `\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n--${BOUNDARY}--\r\n`,
      );
    return { connection, answered, finish };
  };

  it('sweeps the spool root a crashed process left, at start', () => {
    expect(roots()).not.toContain(crashed);
  });

  it('bounds the bytes spooled at once by max_upload_spool_bytes: 503 with Retry-After, bytes given back when the spool is deleted', async () => {
    // The first upload holds 200 KiB of the 256 KiB budget, its model still to come.
    const first = chunked();
    first.connection.write(Buffer.alloc(200 * KIB, 1));
    await waitUntil(() => spooledFiles().some((file) => statSync(file).size >= 200 * KIB));

    // Announced: refused before its body is read; nothing of it reaches the disk.
    const refused = await announced(100 * KIB);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    const { error } = (await refused.json()) as any;
    expect(error.code).toBe('upload_spool_full');
    expect(error.message).toContain('general_settings.max_upload_spool_bytes');
    expect(spooledFiles()).toHaveLength(1);

    // Not announced: refused once its running total passes the budget, its partial spool deleted.
    const second = chunked();
    second.connection.write(Buffer.alloc(100 * KIB, 2));
    second.finish();
    const secondAnswer = await second.answered;
    expect(secondAnswer.status).toBe(503);
    expect(secondAnswer.headers['retry-after']).toBe('5');
    expect(JSON.parse(secondAnswer.body).error.message).toContain('general_settings.max_upload_spool_bytes');
    await waitUntil(() => spooledFiles().length === 1);

    // The first upload completes; its spool is deleted and its bytes given back: a new upload fits.
    first.finish();
    expect((await first.answered).status).toBe(200);
    expect(spooledFiles()).toEqual([]);
    const accepted = await announced(200 * KIB);
    expect(accepted.status).toBe(200);
    expect(upstream.requests.map((request) => request.file!.bytes.length)).toEqual([200 * KIB, 200 * KIB]);
  });

  it('answers 500 without the temporary path when our own disk fails, logs the cause, and recovers once it is fixed', async () => {
    const [root] = roots();
    expect(root).toBeDefined();
    // The spool root is replaced by a file: the request folder cannot be made (ENOTDIR, even as root).
    rmSync(join(tmpdir(), root!), { recursive: true });
    writeFileSync(join(tmpdir(), root!), 'not a folder');
    logs.length = 0;
    const failed = await announced(1000);
    expect(failed.status).toBe(500);
    const text = await failed.text();
    expect(text).not.toContain(tmpdir());
    expect(text).not.toContain(SPOOL_PREFIX);
    expect(JSON.parse(text).error.message).toContain('could not store the upload');
    expect(logs.some((line) => line.level === 50 && line.err?.code === 'ENOTDIR')).toBe(true);
    expect(upstream.requests).toHaveLength(2);

    rmSync(join(tmpdir(), root!));
    expect((await announced(1000)).status).toBe(200);
  });

  it.skipIf(process.getuid?.() === 0)(
    'answers 500 when the spool root cannot be written (EACCES; not testable as root, who may write anywhere)',
    async () => {
      const [root] = roots();
      const path = join(tmpdir(), root!);
      const { chmodSync } = await import('node:fs');
      chmodSync(path, 0o500);
      try {
        const failed = await announced(1000);
        expect(failed.status).toBe(500);
        expect(await failed.text()).not.toContain(path);
      } finally {
        chmodSync(path, 0o700);
      }
    },
  );

  it('keeps max_upload_bytes at least max_request_body_bytes: refused below, defaulted above', () => {
    const load = (general: string) =>
      parseConfig(`general_settings:\n${general}`, {
        path: undefined,
        env: {},
        dataDir: '/x',
        source: 'test',
      });
    expect(load('  max_request_body_bytes: 1024\n').general_settings.max_upload_bytes).toBe(25 * 1024 * 1024);
    expect(load('  max_request_body_bytes: 52428800\n').general_settings.max_upload_bytes).toBe(52_428_800);
    let refused: unknown;
    try {
      load('  max_request_body_bytes: 4096\n  max_upload_bytes: 2048\n');
    } catch (error) {
      refused = error;
    }
    expect((refused as ConfigError).issues).toContain(
      'general_settings.max_upload_bytes: must be at least max_request_body_bytes',
    );
  });

  it('keeps max_upload_spool_bytes at least max_upload_bytes: 1 GiB by default, refused below one upload', () => {
    const load = (general: string) =>
      parseConfig(`general_settings:\n${general}`, {
        path: undefined,
        env: {},
        dataDir: '/x',
        source: 'test',
      });
    expect(load('  max_upload_bytes: 20971520\n').general_settings.max_upload_spool_bytes).toBe(1024 ** 3);
    expect(load('  max_upload_bytes: 2147483648\n').general_settings.max_upload_spool_bytes).toBe(2147483648);
    let refused: unknown;
    try {
      load('  max_upload_bytes: 26214400\n  max_upload_spool_bytes: 1048576\n');
    } catch (error) {
      refused = error;
    }
    expect((refused as ConfigError).issues).toContain(
      'general_settings.max_upload_spool_bytes: must be at least max_upload_bytes',
    );
  });

  it("removes the process's spool root when the gateway closes", async () => {
    expect(roots()).toHaveLength(1);
    await gateway!.close();
    gateway = undefined;
    expect(roots()).toEqual([]);
  });
});
