/**
 * Output-token counters in the shared store (spec: Limits > Output tokens per minute, rules 3, 4, 5, 6,
 * 10 and 12): the admission read, per-attempt recording by the store's clock with receipts, expiries,
 * saturation and unknown markers, and the epoch marker, on Redis under a private key prefix. The
 * store's clock is injected (the scripts take it instead of TIME) except where TIME itself is tested.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlannedOutput } from '../../src/limits/output-checks.ts';
import { OutputRecorder } from '../../src/limits/output-recorder.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { MemorySharedStore } from '../../src/store/shared/memory-shared-store.ts';
import {
  OUTPUT_COUNTER_MAX,
  OUTPUT_EPOCH_KEY,
  type OutputRecording,
  outputBucketKey,
  outputCounterBase,
  outputReceiptKey,
  outputUnknownKey,
} from '../../src/store/shared/output-counters.ts';
import type { AdmissionRequest } from '../../src/store/shared/rate-limit-counters.ts';
import { RedisSharedStore } from '../../src/store/shared/redis-shared-store.ts';
import {
  OutputCountersUnsupportedError,
  type SharedStore,
  SharedStoreUnavailableError,
} from '../../src/store/shared/shared-store.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { realBackendsAvailable, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

const at = (iso: string) => Date.parse(iso);
const minuteOf = (time: number) => Math.floor(time / 60_000);

describe('output counters on the memory store', () => {
  it('refuses output counters: output policies need the shared Redis store (rule 10)', async () => {
    const store = new MemorySharedStore(new ManualClock());
    await expect(store.recordOutput({ keys: ['a'], amount: 1, receipt: 'r' })).rejects.toBeInstanceOf(
      OutputCountersUnsupportedError,
    );
    await expect(store.admit({ checks: [], outputs: [{ key: 'a', limit: 1 }] })).rejects.toBeInstanceOf(
      OutputCountersUnsupportedError,
    );
  });
});

describe.skipIf(!(await realBackendsAvailable()))('output counters on Redis', () => {
  const clock = new ManualClock(at('2026-11-23T12:00:00Z'));
  const prefix = `${uniqueName('sbot')}:`;
  let store: RedisSharedStore;
  let untimed: RedisSharedStore;
  let raw: Redis;

  beforeAll(async () => {
    store = new RedisSharedStore({ url: TEST_REDIS_URL, prefix, commandTimeoutMs: 1_000, clock });
    untimed = new RedisSharedStore({ url: TEST_REDIS_URL, prefix, commandTimeoutMs: 1_000 });
    raw = new Redis(TEST_REDIS_URL);
    await Promise.all([store.waitUntilReady(2_000), untimed.waitUntilReady(2_000)]);
    // The store's first start pauses governed callers until the next minute; the tests start after it.
    clock.set(at('2026-11-23T11:59:30Z'));
    await store.ensureOutputEpoch();
  });
  afterAll(async () => {
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length > 0) await raw.del(...keys);
    raw.disconnect();
    await store?.close();
    await untimed?.close();
  });

  const base = () => outputCounterBase('key', uniqueName('k'));
  const randomEmoji = () => String.fromCodePoint(0x1f600 + Math.floor(Math.random() * 80));
  /** Another store on the same Redis and clock, under its own prefix. */
  const storeUnder = async (other: string) => {
    const created = new RedisSharedStore({
      url: TEST_REDIS_URL,
      prefix: other,
      commandTimeoutMs: 1_000,
      clock,
    });
    await created.waitUntilReady(2_000);
    return created;
  };
  const admit = (key: string, limit: number, extra: Partial<AdmissionRequest> = {}) =>
    store.admit({ checks: [], outputs: [{ key, limit }], epochId: randomUUID(), ...extra });
  const record = (key: string, amount: number, receipt = randomUUID()) =>
    store.recordOutput({ keys: [key], amount, receipt });

  it('admits below the limit and refuses at or above it, with no reservation (rule 3, worked example)', async () => {
    clock.set(at('2026-11-23T12:00:05Z'));
    const key = base();
    await record(key, 900);
    const first = await admit(key, 1000);
    expect(first).toMatchObject({ admitted: true, outputs: [900] });
    // The admitted call produces 300: recorded output goes past the limit.
    expect((await record(key, 300)).counts).toEqual([1200]);
    const next = await admit(key, 1000);
    expect(next).toMatchObject({ admitted: false, output: { state: 'exceeded', index: 0, recorded: 1200 } });
    clock.set(at('2026-11-23T12:01:00Z'));
    expect(await admit(key, 1000)).toMatchObject({ admitted: true, outputs: [0] });
  });

  it('refuses at exactly the limit (equal to the limit gives 429)', async () => {
    const key = base();
    await record(key, 1000);
    expect(await admit(key, 1000)).toMatchObject({ admitted: false, output: { state: 'exceeded' } });
    expect(await admit(key, 1001)).toMatchObject({ admitted: true, outputs: [1000] });
  });

  it('records into the minute of the store clock at recording time, not at admission (rule 4)', async () => {
    clock.set(at('2026-11-23T12:05:59.500Z'));
    const key = base();
    expect(await admit(key, 1000)).toMatchObject({ admitted: true });
    clock.set(at('2026-11-23T12:06:00.200Z'));
    const recorded = await record(key, 700);
    expect(recorded.minute).toBe(minuteOf(at('2026-11-23T12:06:00Z')));
    expect(await raw.get(prefix + outputBucketKey(key, minuteOf(at('2026-11-23T12:05:00Z'))))).toBeNull();
    expect(await raw.get(prefix + outputBucketKey(key, recorded.minute))).toBe('700');
  });

  it("chooses the minute by the Redis server's TIME when no clock is injected (rule 4)", async () => {
    const key = base();
    const [before] = await raw.time();
    const recorded = await untimed.recordOutput({ keys: [key], amount: 5, receipt: randomUUID() });
    const [after] = await raw.time();
    expect(recorded.minute).toBeGreaterThanOrEqual(minuteOf(Number(before) * 1000));
    expect(recorded.minute).toBeLessThanOrEqual(minuteOf(Number(after) * 1000));
    expect(await raw.get(prefix + outputBucketKey(key, recorded.minute))).toBe('5');
  });

  it('counts a write retried with the same receipt once, and keeps the receipt 120 s (rule 10)', async () => {
    clock.set(at('2026-11-23T12:10:10Z'));
    const key = base();
    const receipt = randomUUID();
    const first = await record(key, 40, receipt);
    const retried = await record(key, 40, receipt);
    expect(first).toMatchObject({ duplicate: false, counts: [40] });
    expect(retried).toMatchObject({ duplicate: true, counts: [40], minute: first.minute });
    // A retry that arrives after the minute changed still finds the receipt.
    clock.set(at('2026-11-23T12:11:30Z'));
    expect(await record(key, 40, receipt)).toMatchObject({ duplicate: true, minute: first.minute });
    const receiptKey = prefix + outputReceiptKey(receipt);
    const ttl = await raw.pttl(receiptKey);
    expect(ttl).toBeGreaterThan(110_000);
    expect(ttl).toBeLessThanOrEqual(120_000);
    expect(Buffer.byteLength((await raw.get(receiptKey)) ?? '')).toBeLessThanOrEqual(4096);
  });

  it('expires buckets and unknown markers 30 s after their minute ends (rule 10)', async () => {
    clock.set(at('2026-11-23T12:20:15Z'));
    const key = base();
    const { minute } = await record(key, 1);
    await store.markOutputUnknown([key]);
    const end = at('2026-11-23T12:21:00Z') + 30_000 - clock.now();
    for (const stored of [outputBucketKey(key, minute), outputUnknownKey(key, minute)]) {
      const ttl = await raw.pttl(prefix + stored);
      expect(ttl).toBeGreaterThan(end - 2_000);
      expect(ttl).toBeLessThanOrEqual(end);
    }
  });

  it('saturates counters at 2147483647 and says so (rule 10)', async () => {
    const key = base();
    expect(await record(key, OUTPUT_COUNTER_MAX - 10)).toMatchObject({ saturated: false });
    const over = await record(key, 1000);
    expect(over).toMatchObject({ saturated: true, counts: [OUTPUT_COUNTER_MAX] });
    expect(await record(key, 5)).toMatchObject({ saturated: true, counts: [OUTPUT_COUNTER_MAX] });
  });

  it('an unknown marker refuses until the minute boundary; known charges do not clear it (States)', async () => {
    clock.set(at('2026-11-23T12:30:10Z'));
    const key = base();
    const other = base();
    await store.markOutputUnknown([key]);
    expect(
      await store.admit({
        checks: [],
        outputs: [
          { key: other, limit: 10 },
          { key, limit: 1000 },
        ],
        epochId: randomUUID(),
      }),
    ).toMatchObject({ admitted: false, output: { state: 'unknown', index: 1 } });
    await record(key, 3);
    expect(await admit(key, 1000)).toMatchObject({ output: { state: 'unknown' } });
    clock.set(at('2026-11-23T12:31:00Z'));
    expect(await admit(key, 1000)).toMatchObject({ admitted: true, outputs: [0] });
  });

  it("a recording reports each counter's unknown marker of its minute, also one another request set (rule 6)", async () => {
    clock.set(at('2026-11-23T12:35:10Z'));
    const key = base();
    const other = base();
    expect(await store.recordOutput({ keys: [key, other], amount: 5, receipt: randomUUID() })).toMatchObject({
      counts: [5, 5],
      unknown: [false, false],
    });
    await store.markOutputUnknown([other]);
    const receipt = randomUUID();
    expect(await store.recordOutput({ keys: [key, other], amount: 5, receipt })).toMatchObject({
      counts: [10, 10],
      unknown: [false, true],
    });
    expect(await store.recordOutput({ keys: [key, other], amount: 5, receipt })).toMatchObject({
      duplicate: true,
      unknown: [false, true],
    });
  });

  it('reads output counters in the admission round trip after every identity check, changing nothing on refusal', async () => {
    clock.set(at('2026-11-23T12:40:00Z'));
    const key = base();
    await record(key, 50);
    const rpm = `rl:key:${uniqueName('r')}:rpm`;
    const refused = await admit(key, 50, { checks: [{ key: rpm, window: 'minute', limit: 5, amount: 1 }] });
    expect(refused).toMatchObject({ admitted: false, output: { state: 'exceeded' } });
    expect(await raw.exists(prefix + rpm)).toBe(0);
    const identityFirst = await admit(key, 50, {
      checks: [{ key: rpm, window: 'minute', limit: 0, amount: 1 }],
    });
    expect(identityFirst).toMatchObject({ admitted: false, failed: 0 });
    expect(identityFirst).not.toHaveProperty('output');
  });

  it('pauses governed admission until the next minute when the epoch marker is lost (rule 12)', async () => {
    clock.set(at('2026-11-23T12:50:20Z'));
    const key = base();
    await raw.del(prefix + OUTPUT_EPOCH_KEY);
    // Admission without output checks does not look at (or re-create) the marker.
    expect(await store.admit({ checks: [] })).toMatchObject({ admitted: true });
    expect(await raw.exists(prefix + OUTPUT_EPOCH_KEY)).toBe(0);
    const until = minuteOf(at('2026-11-23T12:51:00Z'));
    expect(await admit(key, 10)).toMatchObject({ admitted: false, output: { state: 'unavailable', until } });
    clock.set(at('2026-11-23T12:50:59Z'));
    expect(await admit(key, 10)).toMatchObject({ output: { state: 'unavailable', until } });
    // A start-up meanwhile does not end the pause: the paused marker is there.
    expect(await store.ensureOutputEpoch()).toBe(false);
    clock.set(at('2026-11-23T12:51:00Z'));
    expect(await admit(key, 10)).toMatchObject({ admitted: true });
    expect(await raw.hget(prefix + OUTPUT_EPOCH_KEY, 'until')).toBe('0');
  });

  it('a marker restored from before acknowledged writes (restore, lagging failover) pauses governed admission (rule 12)', async () => {
    clock.set(at('2026-11-23T12:55:10Z'));
    const key = base();
    expect(await admit(key, 1000)).toMatchObject({ admitted: true });
    const snapshot = await raw.dumpBuffer(prefix + OUTPUT_EPOCH_KEY);
    const recorded = await record(key, 10);
    expect(recorded.epoch?.seq).toBeGreaterThan(0);
    // This process saw its write acknowledged: a marker that still has it is no reason to pause.
    expect(await admit(key, 1000, { epochSeen: recorded.epoch! })).toMatchObject({ admitted: true });
    await raw.restore(prefix + OUTPUT_EPOCH_KEY, 0, snapshot, 'REPLACE');
    const until = minuteOf(at('2026-11-23T12:56:00Z'));
    expect(await admit(key, 1000, { epochSeen: recorded.epoch! })).toMatchObject({
      admitted: false,
      output: { state: 'unavailable', until },
    });
    // Every process pauses, also one that saw nothing; the next minute starts a new epoch.
    expect(await admit(key, 1000)).toMatchObject({ output: { state: 'unavailable', until } });
    clock.set(at('2026-11-23T12:56:00Z'));
    expect(await admit(key, 1000, { epochSeen: recorded.epoch! })).toMatchObject({ admitted: true });
    expect(await raw.hget(prefix + OUTPUT_EPOCH_KEY, 'id')).not.toBe(recorded.epoch!.id);
  });

  it('the first start of a store without the marker creates it paused until the next minute (rule 12)', async () => {
    clock.set(at('2026-11-23T13:10:20Z'));
    const freshPrefix = `${uniqueName('sbof')}:`;
    const fresh = await storeUnder(freshPrefix);
    try {
      expect(await fresh.ensureOutputEpoch()).toBe(true);
      const until = minuteOf(at('2026-11-23T13:11:00Z'));
      expect(await raw.hgetall(freshPrefix + OUTPUT_EPOCH_KEY)).toEqual({
        id: '',
        until: String(until),
        seq: '0',
      });
      const request = { checks: [], outputs: [{ key: base(), limit: 10 }], epochId: randomUUID() };
      expect(await fresh.admit(request)).toMatchObject({
        admitted: false,
        output: { state: 'unavailable', until },
      });
      clock.set(at('2026-11-23T13:11:00Z'));
      expect(await fresh.admit(request)).toMatchObject({ admitted: true });
      expect(await raw.hget(freshPrefix + OUTPUT_EPOCH_KEY, 'id')).toBe(request.epochId);
    } finally {
      await raw.del(freshPrefix + OUTPUT_EPOCH_KEY);
      await fresh.close();
    }
  });

  it('with a prefix of 64 emoji every stored output key stays within 512 bytes, and admission reads what recording wrote (rule 10)', async () => {
    clock.set(at('2026-11-23T13:20:10Z'));
    // 64 characters, 256 UTF-8 bytes; the last two vary so that runs do not share keys.
    const emojiPrefix = '🚀'.repeat(62) + randomEmoji() + randomEmoji();
    const emoji = await storeUnder(emojiPrefix);
    try {
      await raw.hset(emojiPrefix + OUTPUT_EPOCH_KEY, { id: 'live', until: 0, seq: 0 });
      const key = outputCounterBase('key', uniqueName('k'), 'm'.repeat(256));
      await emoji.recordOutput({ keys: [key], amount: 7, receipt: randomUUID() });
      await emoji.markOutputUnknown([key]);
      const stored = await raw.keys(`${emojiPrefix}*`);
      expect(stored.length).toBeGreaterThanOrEqual(4);
      for (const name of stored) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(512);
      expect(
        await emoji.admit({ checks: [], outputs: [{ key, limit: 10 }], epochId: randomUUID() }),
      ).toMatchObject({ admitted: false, output: { state: 'unknown', index: 0 } });
      clock.set(at('2026-11-23T13:21:10Z'));
      await emoji.recordOutput({ keys: [key], amount: 10, receipt: randomUUID() });
      expect(
        await emoji.admit({ checks: [], outputs: [{ key, limit: 10 }], epochId: randomUUID() }),
      ).toMatchObject({ admitted: false, output: { state: 'exceeded', recorded: 10 } });
    } finally {
      const stored = await raw.keys(`${emojiPrefix}*`);
      if (stored.length > 0) await raw.del(...stored);
      await emoji.close();
    }
  });

  it('a restart that finds the epoch marker does not pause (rule 12)', async () => {
    clock.set(at('2026-11-23T13:00:10Z'));
    expect(await store.ensureOutputEpoch()).toBe(false);
    expect(await admit(base(), 10)).toMatchObject({ admitted: true });
    expect(await raw.pttl(prefix + OUTPUT_EPOCH_KEY)).toBe(-1);
  });
});

describe.skipIf(!(await realBackendsAvailable()))('OutputRecorder on Redis', () => {
  const clock = new ManualClock(at('2026-11-23T15:00:00Z'));
  const prefix = `${uniqueName('sbor')}:`;
  let store: RedisSharedStore;
  let raw: Redis;

  beforeAll(async () => {
    store = new RedisSharedStore({ url: TEST_REDIS_URL, prefix, commandTimeoutMs: 1_000, clock });
    raw = new Redis(TEST_REDIS_URL);
    await store.waitUntilReady(2_000);
  });
  afterAll(async () => {
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length > 0) await raw.del(...keys);
    raw.disconnect();
    await store?.close();
  });

  function recorder(target: SharedStore, limit = 1000) {
    const metrics = createMetrics({ collectProcessMetrics: false });
    const planned: PlannedOutput[] = [
      {
        scope: 'key',
        name: 'key_output_tpm',
        check: { key: outputCounterBase('key', uniqueName('k')), limit },
      },
    ];
    const output = new OutputRecorder({
      store: target,
      planned,
      admitted: { counts: [0], now: clock.now() },
      metrics,
      logger: pino({ level: 'silent' }),
    });
    return { output, metrics, key: planned[0]!.check.key };
  }

  it('a write whose reply was lost is retried with the same receipt and counted once (rule 10)', async () => {
    let calls = 0;
    // The first write reaches Redis, but its reply is lost (a timeout): the recorder retries.
    const lossy = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'recordOutput') return Reflect.get(target, property, receiver);
        return async (request: OutputRecording) => {
          const result = await target.recordOutput(request);
          if (++calls === 1) throw new SharedStoreUnavailableError('no answer within 1000 ms');
          return result;
        };
      },
    });
    const { output, metrics, key } = recorder(lossy);
    output.attempt(250);
    await output.flush();
    expect(calls).toBe(2);
    expect(await raw.get(prefix + outputBucketKey(key, minuteOf(clock.now())))).toBe('250');
    expect(output.headers['x-ratelimit-remaining-output-tokens']).toBe('750');
    expect((await metrics.outputTpmEvents.get()).values).toContainEqual(
      expect.objectContaining({ labels: { event: 'accounted' }, value: 1 }),
    );
  });

  it('zero output writes nothing; unknown usage marks the scope and hides remaining capacity (rules 5, 6)', async () => {
    const { output, key } = recorder(store);
    output.attempt(0);
    await output.flush();
    expect(await raw.exists(prefix + outputBucketKey(key, minuteOf(clock.now())))).toBe(0);
    expect(output.headers['x-ratelimit-remaining-output-tokens']).toBe('1000');
    output.attempt('unknown');
    await output.flush();
    expect(await raw.exists(prefix + outputUnknownKey(key, minuteOf(clock.now())))).toBe(1);
    expect(output.headers).not.toHaveProperty('x-ratelimit-remaining-output-tokens');
  });

  it('a final accounting failure keeps going, hides remaining capacity and counts accounting_failed (rule 6)', async () => {
    const failing = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'recordOutput') return Reflect.get(target, property, receiver);
        return async () => {
          throw new SharedStoreUnavailableError('redis connection is end');
        };
      },
    });
    const { output, metrics } = recorder(failing);
    output.attempt(10);
    await output.flush();
    expect(output.headers).not.toHaveProperty('x-ratelimit-remaining-output-tokens');
    expect(output.headers['x-ratelimit-limit-output-tokens']).toBe('1000');
    expect((await metrics.outputTpmEvents.get()).values).toContainEqual(
      expect.objectContaining({ labels: { event: 'accounting_failed' }, value: 1 }),
    );
  });

  it("another request's unknown usage on the same counter hides this one's remaining capacity (rule 6)", async () => {
    const { output: first, key } = recorder(store);
    const second = new OutputRecorder({
      store,
      planned: [{ scope: 'key', name: 'key_output_tpm', check: { key, limit: 1000 } }],
      admitted: { counts: [0], now: clock.now() },
      metrics: createMetrics({ collectProcessMetrics: false }),
      logger: pino({ level: 'silent' }),
    });
    second.attempt('unknown');
    await second.flush();
    first.attempt(100);
    await first.flush();
    expect(first.headers['x-ratelimit-limit-output-tokens']).toBe('1000');
    expect(first.headers).not.toHaveProperty('x-ratelimit-remaining-output-tokens');
  });

  it('counts saturation (rule 10)', async () => {
    const { output, metrics } = recorder(store);
    output.attempt(OUTPUT_COUNTER_MAX);
    output.attempt(1);
    await output.flush();
    expect((await metrics.outputTpmEvents.get()).values).toContainEqual(
      expect.objectContaining({ labels: { event: 'saturated' }, value: 1 }),
    );
  });
});
