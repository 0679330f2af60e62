/**
 * Files and batches count against the key's limits like every other call of the key (issue 25: a key
 * at its rpm_limit was refused chat but served POST /v1/files and GET /v1/batches), on the embedded
 * default and on PostgreSQL + Redis, with the store's clock injected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends } from '../support/available-backends.ts';
import type { Backend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

const at = (iso: string) => Date.parse(iso);
const line = JSON.stringify({
  custom_id: 'a',
  method: 'POST',
  url: '/v1/embeddings',
  body: { model: 'demo', input: 'x' },
});

describe.each(await availableBackends())(
  'file and batch calls under the key’s limits on %s',
  (_name, makeBackend) => {
    let backend: Backend;
    let gateway: TestGateway;
    const clock = new ManualClock(at('2026-11-23T12:00:10Z'));

    beforeAll(async () => {
      backend = makeBackend();
      gateway = await startTestGateway({ backend, clock, batches: true });
      await gateway.gateway.batchWorker?.stop();
    });
    afterAll(async () => {
      await gateway?.close();
      await backend?.cleanup();
    });

    const call = (key: string, method: string, path: string, body?: FormData | object) =>
      fetch(gateway.baseUrl + path, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
        },
        ...(body instanceof FormData ? { body } : body ? { body: JSON.stringify(body) } : {}),
      });
    const upload = (key: string) => {
      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('file', new Blob([`${line}\n`]), 'in.jsonl');
      return call(key, 'POST', '/v1/files', form);
    };
    const chat = (key: string) =>
      call(key, 'POST', '/v1/chat/completions', {
        model: 'demo',
        messages: [{ role: 'user', content: 'hi' }],
      });

    async function expectKeyRpm(response: Response): Promise<void> {
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBeTruthy();
      expect(((await response.json()) as any).error).toMatchObject({
        param: 'key_rpm',
        code: 'key_rpm_exceeded',
      });
    }

    it('refuses POST /v1/files and GET /v1/batches once the key is at its rpm_limit, as it refuses chat', async () => {
      clock.set(at('2026-11-23T12:00:10Z'));
      const key = await gateway.createKey({ rpm_limit: 3 });
      expect((await chat(key)).status).toBe(200);
      const uploaded = await upload(key);
      expect(uploaded.status, await uploaded.clone().text()).toBe(200);
      expect(uploaded.headers.get('x-ratelimit-remaining-requests')).toBe('1');
      const listed = await call(key, 'GET', '/v1/batches');
      expect(listed.status).toBe(200);
      expect(listed.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      await expectKeyRpm(await chat(key));
      await expectKeyRpm(await upload(key));
      await expectKeyRpm(await call(key, 'GET', '/v1/batches'));
      const file = (await uploaded.json()) as { id: string };
      await expectKeyRpm(await call(key, 'GET', `/v1/files/${file.id}/content`));
      await expectKeyRpm(
        await call(key, 'POST', '/v1/batches', {
          input_file_id: file.id,
          endpoint: '/v1/embeddings',
          completion_window: '24h',
        }),
      );
      clock.set(at('2026-11-23T12:01:10Z'));
      expect((await call(key, 'GET', '/v1/batches')).status).toBe(200);
    });

    it('gives back the max_parallel_requests slot of every file and batch call when it ends', async () => {
      const key = await gateway.createKey({ max_parallel_requests: 1 });
      /** The slot is given back in a round trip after the answer: poll until the next call is admitted. */
      const admitted = async (send: () => Promise<Response>) => {
        for (let attempt = 0; attempt < 100; attempt++) {
          const response = await send();
          if (response.status !== 429) return response.status;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return 429;
      };
      for (let round = 0; round < 3; round++) {
        expect(await admitted(() => upload(key))).toBe(200);
        expect(await admitted(() => call(key, 'GET', '/v1/batches'))).toBe(200);
        expect(await admitted(() => call(key, 'GET', '/v1/files'))).toBe(200);
      }
    });
  },
);
