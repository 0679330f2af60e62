/**
 * Draining for a shutdown (issue 9): readiness answers 503 while the replica keeps serving during the
 * pre-stop delay, and a stream still open when the grace period ends gets one in-band error event (no
 * [DONE]) and is logged as cut, instead of being cut mid-body and logged as 200.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeOpenAiAudioServer } from '../fakes/fake-openai-audio-server.ts';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, openBackendDatabase, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('draining for a shutdown', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(generalSettings = ''): Promise<{
    gateway: TestGateway;
    upstream: FakeOpenAiServer;
    audio: FakeOpenAiAudioServer;
    logs: any[];
    key: string;
    backend: Backend;
  }> {
    const upstream = await FakeOpenAiServer.start();
    const audio = await FakeOpenAiAudioServer.start();
    const backend: Backend = sqliteBackend();
    const logs: any[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        done();
      },
    });
    const gateway = await startTestGateway({
      backend,
      logger: pino({ level: 'info' }, sink),
      yaml: `
model_list:
  - { model_name: slow, params: { provider: openai, model: m, api_base: "${upstream.baseUrl}" }, model_info: { id: slow-1 } }
  - { model_name: tts, params: { provider: openai, model: t, api_base: "${audio.baseUrl}" }, model_info: { id: tts-1, mode: audio_speech } }
`,
      generalSettings,
    });
    cleanups.push(async () => {
      await upstream.close();
      await audio.close();
      await backend.cleanup();
    });
    return { gateway, upstream, audio, logs, key: await gateway.createKey(), backend };
  }

  const chat = (gateway: TestGateway, key: string, stream: boolean) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', stream, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('answers readiness 503 but keeps serving during the pre-stop delay', async () => {
    const { gateway, key } = await start();
    const closing = gateway.gateway.close(1_000, 500);
    expect((await fetch(`${gateway.baseUrl}/health/readiness`)).status).toBe(503);
    const served = await chat(gateway, key, false);
    expect(served.status).toBe(200);
    await closing;
    await expect(fetch(`${gateway.baseUrl}/health/liveliness`)).rejects.toThrow();
  });

  it('ends a stream still open after the grace period with an error event, no [DONE], logged as cut', async () => {
    const { gateway, upstream, logs, key } = await start();
    upstream.defaultScenario = { kind: 'answer', text: 'word '.repeat(100), chunkDelayMs: 100 };
    const response = await chat(gateway, key, true);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value);
    const closing = gateway.gateway.close(300, 0);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    await closing;
    expect(text).toContain('"content":"word ');
    expect(text).toMatch(/data: \{"error":\{[^\n]*"code":"not_ready"/);
    expect(text).not.toContain('[DONE]');
    const line = logs.find((entry) => entry.msg === 'stream cut by shutdown');
    expect(line).toMatchObject({ url: '/v1/chat/completions', status: 200, cut: true });
    expect(
      logs.some(
        (entry) =>
          entry.msg === 'request completed' &&
          entry.url === '/v1/chat/completions' &&
          entry.status === 200 &&
          !entry.cut &&
          entry.ms > 250,
      ),
    ).toBe(false);
  });

  // A stream cut by the shutdown delivered content: its charge (an estimate, the upstream's usage report
  // never came) must be written before the databases close, not lost with the process.
  it.each(['legacy', 'outbox'])(
    'charges a stream it cut, once, before closing the database (%s)',
    async (mode) => {
      const { gateway, upstream, key, backend } = await start(`  spend_ingestion_mode: ${mode}\n`);
      upstream.defaultScenario = { kind: 'answer', text: 'word '.repeat(100), chunkDelayMs: 100 };
      const response = await chat(gateway, key, true);
      const requestId = response.headers.get('x-request-id')!;
      const reader = response.body!.getReader();
      await reader.read();
      const closing = gateway.gateway.close(300, 0);
      while (!(await reader.read()).done) {}
      await closing;
      const database = await openBackendDatabase(backend, { migrate: false });
      try {
        const rows = await database.db
          .selectFrom('spend_logs')
          .select(['request_id', 'status'])
          .where('request_id', '=', requestId)
          .execute();
        const queued = await database.db.selectFrom('spend_outbox').select('record').execute();
        const pending = queued.filter((row) => row.record.includes(requestId));
        expect(rows.length + pending.length).toBe(1);
        // Recorded with the status of its in-band error (not_ready), not as a caller who left.
        expect([
          ...rows.map((row) => row.status),
          ...pending.map((row) => JSON.parse(row.record).status),
        ]).toEqual([503]);
      } finally {
        await database.close();
      }
    },
  );

  it('cuts a speech body still open after the grace period: the caller sees it incomplete, logged as cut', async () => {
    const { gateway, audio, logs, key } = await start();
    audio.speech.push({ kind: 'stall', audio: Buffer.alloc(100_000, 3), bytes: 4096 });
    const response = await fetch(`${gateway.baseUrl}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts', input: 'Hello', voice: 'alloy' }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect((await reader.read()).value!.length).toBeGreaterThan(0);
    const closing = gateway.gateway.close(300, 0);
    const read = (async () => {
      for (;;) if ((await reader.read()).done) return 'ended';
    })();
    await expect(read).rejects.toThrow();
    await closing;
    const line = logs.find((entry) => entry.msg === 'stream cut by shutdown');
    expect(line).toMatchObject({ url: '/v1/audio/speech', status: 200, cut: true });
  });

  // A destroyed body settles when its socket's close reaches the request, which can come after the
  // server's own close: the spend flush waits for it, so its record is written with the rest.
  it('charges a speech body it cut, once, before closing the database', async () => {
    const { gateway, audio, key, backend } = await start();
    audio.speech.push({ kind: 'stall', audio: Buffer.alloc(100_000, 3), bytes: 4096 });
    const response = await fetch(`${gateway.baseUrl}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts', input: 'Hello', voice: 'alloy' }),
    });
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    await reader.read();
    const closing = gateway.gateway.close(300, 0);
    await (async () => {
      for (;;) if ((await reader.read()).done) return;
    })().catch(() => {});
    await closing;
    const database = await openBackendDatabase(backend, { migrate: false });
    try {
      const rows = await database.db
        .selectFrom('spend_logs')
        .select('request_id')
        .where('request_id', '=', requestId)
        .execute();
      expect(rows).toHaveLength(1);
    } finally {
      await database.close();
    }
  });
});
