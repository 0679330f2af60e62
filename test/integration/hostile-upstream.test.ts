/**
 * Misbehaving upstreams on loopback (issue 9): an endless `data:` line, `data:` lines that never end
 * their event, and a stream of keep-alive comments that never sends a chunk. Each is bounded: the
 * upstream is aborted, the failure counts against that deployment only, and another caller's requests
 * are answered while it happens. That last rule is stated as event order, not as a wall-clock bound a
 * loaded machine stretches: the hostile upstream pauses midway (its garbage half read by the gateway)
 * until another caller's request has been answered, and every other call meanwhile succeeds.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

type Mode = 'endless-line' | 'unended-event' | 'pings';

/** What the hostile upstream managed to send, and whether the gateway hung up on it. */
interface Exchange {
  bytes: number;
  closedByGateway: boolean;
  /** The upstream sent all it meant to (200 pings, or the byte cap) without being hung up on. */
  finishedByUpstream: boolean;
}

/** Where the hostile upstream pauses: a megabyte into the garbage, well below the gateway's bounds. */
const HOLD_AFTER_BYTES = 1024 * 1024;

const CAP_BYTES = 64 * 1024 * 1024;
const CHUNK = `{"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`;

class HostileUpstream {
  mode: Mode = 'pings';
  readonly exchanges: Exchange[] = [];
  /** When set, the next exchange pauses after HOLD_AFTER_BYTES, calls `reached`, and waits for `until`. */
  hold: { reached: () => void; until: Promise<void> } | undefined;
  private server!: Server;

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      request.resume();
      request.on('end', () => void this.answer(response));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async answer(response: ServerResponse): Promise<void> {
    const exchange: Exchange = { bytes: 0, closedByGateway: false, finishedByUpstream: false };
    const hold = this.hold;
    this.hold = undefined;
    this.exchanges.push(exchange);
    let closed = false;
    response.on('close', () => {
      closed = true;
      exchange.closedByGateway = !response.writableFinished;
    });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = async (text: string) => {
      exchange.bytes += text.length;
      if (!response.write(text))
        await new Promise((resolve) => response.once('drain', resolve).once('close', resolve));
      if (hold && exchange.bytes >= HOLD_AFTER_BYTES && exchange.bytes - text.length < HOLD_AFTER_BYTES) {
        hold.reached();
        await hold.until;
      }
    };
    if (this.mode === 'pings') {
      // Bounded: 200 comments, 20 ms apart (4 s), unless the gateway hangs up first.
      for (let index = 0; index < 200 && !closed; index++) {
        await write(': ping\n\n');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } else if (this.mode === 'endless-line') {
      await write(`data: ${CHUNK}\n\ndata: `);
      const filler = 'x'.repeat(64 * 1024);
      while (!closed && exchange.bytes < CAP_BYTES) await write(filler);
    } else {
      const line = 'data: {}\n'.repeat(4096);
      while (!closed && exchange.bytes < CAP_BYTES) await write(line);
    }
    exchange.finishedByUpstream = !closed;
    response.end();
  }
}

describe('misbehaving upstreams are bounded and hurt no other caller', () => {
  let backend: Backend;
  let hostile: HostileUpstream;
  let calm: FakeOpenAiServer;
  let gateway: TestGateway;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    hostile = await new HostileUpstream().start();
    calm = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `
model_list:
  - { model_name: hostile, params: { provider: openai, model: m, api_base: "${hostile.baseUrl}" }, model_info: { id: hostile-1 } }
  - { model_name: calm, params: { provider: openai, model: m, api_base: "${calm.baseUrl}" }, model_info: { id: calm-1 } }
router_settings: { num_retries: 0, allowed_fails: 1000 }
`,
      generalSettings: '  request_timeout_seconds: 1\n',
    });
    key = await gateway.createKey({ max_parallel_requests: 1 });
    otherKey = await gateway.createKey();
  });
  afterAll(async () => {
    await gateway?.close();
    await hostile?.close();
    await calm?.close();
    await backend?.cleanup();
  });

  const chat = (bearer: string, model: string, stream: boolean) =>
    fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
    });

  /**
   * Runs `hostileCall` while another key keeps calling the calm model (every call must succeed). The
   * hostile upstream pauses a megabyte into its garbage until a calm call started after that point has
   * been answered: the count of such answers is what the test asserts, not how fast they were.
   */
  async function alongside(
    hostileCall: () => Promise<void>,
  ): Promise<{ answeredWhileHeld: number; heapGrowthMb: number }> {
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    let done = false;
    let held = false;
    let answeredWhileHeld = 0;
    let release!: () => void;
    const until = new Promise<void>((resolve) => {
      release = resolve;
    });
    hostile.hold = { reached: () => (held = true), until };
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 10);
    const calmCalls = (async () => {
      try {
        while (!done) {
          const startedWhileHeld = held;
          const response = await chat(otherKey, 'calm', false);
          expect(response.status).toBe(200);
          await response.text();
          if (startedWhileHeld) {
            answeredWhileHeld++;
            release();
          }
        }
      } finally {
        release(); // a failed calm call must not leave the hostile upstream paused forever
      }
    })();
    try {
      await hostileCall();
    } finally {
      done = true;
      release();
      await calmCalls;
      clearInterval(sampler);
    }
    return { answeredWhileHeld, heapGrowthMb: (peak - baseline) / 1024 / 1024 };
  }

  it('ends a stream whose upstream sends an endless line with an in-band error, aborting the upstream', async () => {
    hostile.mode = 'endless-line';
    const { answeredWhileHeld, heapGrowthMb } = await alongside(async () => {
      const response = await chat(key, 'hostile', true);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toContain('"content":"hi"');
      expect(text).toMatch(/data: \{"error":/);
      expect(text).not.toContain('[DONE]');
    });
    const exchange = hostile.exchanges.at(-1)!;
    await expect.poll(() => exchange.closedByGateway).toBe(true);
    expect(exchange.bytes).toBeLessThan(24 * 1024 * 1024); // cut near the 8 MiB line bound
    expect(answeredWhileHeld).toBeGreaterThanOrEqual(1); // another caller answered while it was open
    expect(heapGrowthMb).toBeLessThan(256);
  });

  it('refuses an event whose data lines never end, before any content (502), aborting the upstream', async () => {
    hostile.mode = 'unended-event';
    const { answeredWhileHeld, heapGrowthMb } = await alongside(async () => {
      const response = await chat(key, 'hostile', true);
      expect(response.status).toBe(502);
      expect(((await response.json()) as any).error.code).toBe('upstream_error');
    });
    const exchange = hostile.exchanges.at(-1)!;
    await expect.poll(() => exchange.closedByGateway).toBe(true);
    expect(exchange.bytes).toBeLessThan(24 * 1024 * 1024);
    expect(answeredWhileHeld).toBeGreaterThanOrEqual(1); // another caller answered while it was open
    expect(heapGrowthMb).toBeLessThan(256);
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /gateway_upstream_attempts_total\{deployment="hostile-1",outcome="protocol"\} [1-9]/,
    );
  });

  it('does not count keep-alive comments as the first chunk: the deadline ends the call and frees the slot', async () => {
    hostile.mode = 'pings';
    const response = await chat(key, 'hostile', true);
    expect(response.status).toBe(504);
    // request_timeout_seconds: 1 ended it, not the upstream: its 4 s of pings were still going.
    const exchange = hostile.exchanges.at(-1)!;
    expect(exchange.finishedByUpstream).toBe(false);
    await response.text();
    await expect.poll(() => exchange.closedByGateway).toBe(true);
    // max_parallel_requests: 1, and the slot is free again.
    expect((await chat(key, 'calm', false)).status).toBe(200);
  });
});
