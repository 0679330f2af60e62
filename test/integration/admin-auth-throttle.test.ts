/**
 * Failed admin authentications are throttled per client address (issue 9): after 20 in a minute the
 * address gets 429 with retry-after until the minute ends, on an injected clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

describe('admin authentication throttling', () => {
  let backend: Backend;
  let gateway: TestGateway;
  const clock = new ManualClock(Date.parse('2026-11-24T12:00:05Z'));

  beforeAll(async () => {
    backend = sqliteBackend();
    gateway = await startTestGateway({ backend, clock });
  });
  afterAll(async () => {
    await gateway?.close();
    await backend?.cleanup();
  });

  const listKeys = (bearer: string) =>
    fetch(`${gateway.baseUrl}/ui/api/keys`, { headers: { authorization: `Bearer ${bearer}` } });

  it('answers 429 after 20 failures a minute, also to a valid key, and lets the address in again next minute', async () => {
    for (let attempt = 0; attempt < 20; attempt++)
      expect((await listKeys(`sk-guess-${attempt}`)).status).toBe(401);
    const blocked = await listKeys('sk-guess-21');
    expect(blocked.status).toBe(429);
    expect(((await blocked.json()) as any).error.code).toBe('too_many_failed_authentications');
    expect(blocked.headers.get('retry-after')).toBe('55');
    expect((await listKeys(gateway.masterKey)).status).toBe(429);
    clock.set(Date.parse('2026-11-24T12:01:00Z'));
    expect((await listKeys(gateway.masterKey)).status).toBe(200);
  });

  it('does not throttle proxy callers: a wrong API key on /v1 stays a 401', async () => {
    for (let attempt = 0; attempt < 25; attempt++) {
      const response = await fetch(`${gateway.baseUrl}/v1/models`, {
        headers: { authorization: 'Bearer sk-wrong' },
      });
      expect(response.status).toBe(401);
    }
  });
});
