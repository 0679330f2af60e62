/**
 * SharedStore on Redis (ioredis). Commands fail fast: no offline queue while disconnected, and a
 * command timeout in tens of milliseconds (store-timeout.ts).
 */
import { Redis } from 'ioredis';
import type { Clock } from '../../lib/clock.ts';
import {
  OUTPUT_BUCKET_GRACE_MS,
  OUTPUT_COUNTER_MAX,
  OUTPUT_EPOCH_KEY,
  OUTPUT_RECEIPT_TTL_MS,
  type OutputRecorded,
  type OutputRecording,
  type OutputRefusal,
  outputReceiptKey,
  storedOutputBase,
} from './output-counters.ts';
import type { AdmissionRequest, AdmissionResponse, SettlementRequest } from './rate-limit-counters.ts';
import {
  ENSURE_OUTPUT_EPOCH_SCRIPT,
  MARK_OUTPUT_UNKNOWN_SCRIPT,
  RECORD_OUTPUT_SCRIPT,
} from './redis-output-scripts.ts';
import { redisMatchPattern, unlinkMatching } from './redis-pattern-delete.ts';
import { ADMIT_SCRIPT, SETTLE_SCRIPT } from './redis-rate-limit-scripts.ts';
import { type SharedStore, SharedStoreUnavailableError } from './shared-store.ts';
import { withTimeout } from './store-timeout.ts';

/** The scripts ioredis defines as commands (sent as EVALSHA, loaded on first use). */
interface ScriptCommands {
  switchboardAdmit(
    numberOfKeys: number,
    ...keysAndArguments: Array<string | number>
  ): Promise<Array<string | number>>;
  switchboardSettle(numberOfKeys: number, ...keysAndArguments: Array<string | number>): Promise<number>;
  switchboardRecordOutput(
    numberOfKeys: number,
    ...keysAndArguments: Array<string | number>
  ): Promise<Array<string | number>>;
  switchboardMarkOutputUnknown(
    numberOfKeys: number,
    ...keysAndArguments: Array<string | number>
  ): Promise<Array<string | number>>;
  switchboardEnsureOutputEpoch(
    numberOfKeys: number,
    ...keysAndArguments: Array<string | number>
  ): Promise<number>;
}

// INCRBY, and start the expiry when the key has none (works on every Redis version, unlike PEXPIRE NX).
const INCREMENT_SCRIPT = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value`;
/** INCREMENT_SCRIPT over every key: ARGV[1] is the TTL, ARGV[i + 1] the amount of KEYS[i]. */
const INCREMENT_MANY_SCRIPT = `
for index, key in ipairs(KEYS) do
  redis.call('INCRBY', key, ARGV[index + 1])
  if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ARGV[1]) end
end
return 0`;

export interface RedisSharedStoreOptions {
  url: string;
  /** Prepended to every key and channel, so deployments (and tests) can share one Redis. */
  prefix: string;
  commandTimeoutMs: number;
  /** Time for rate-limit windows; by default the Redis server's clock (TIME). Tests inject one. */
  clock?: Clock;
}

export class RedisSharedStore implements SharedStore {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  readonly client: Redis;
  private subscriber: Redis | undefined;
  private readonly url: string;
  private readonly commandTimeoutMs: number;
  private readonly clock: Clock | undefined;
  private readonly handlers = new Map<
    string,
    { onMessage: (message: string) => void; onResync: () => void }
  >();

  constructor(options: RedisSharedStoreOptions) {
    this.url = options.url;
    this.prefix = options.prefix;
    this.commandTimeoutMs = options.commandTimeoutMs;
    this.clock = options.clock;
    this.client = createClient(options.url);
    this.client.defineCommand('switchboardAdmit', { lua: ADMIT_SCRIPT });
    this.client.defineCommand('switchboardSettle', { lua: SETTLE_SCRIPT });
    this.client.defineCommand('switchboardRecordOutput', { lua: RECORD_OUTPUT_SCRIPT });
    this.client.defineCommand('switchboardMarkOutputUnknown', { lua: MARK_OUTPUT_UNKNOWN_SCRIPT });
    this.client.defineCommand('switchboardEnsureOutputEpoch', { lua: ENSURE_OUTPUT_EPOCH_SCRIPT });
  }

  async admit(request: AdmissionRequest): Promise<AdmissionResponse> {
    const { checks, slot } = request;
    const reads = request.reads ?? [];
    const budgets = request.budgets ?? [];
    const outputs = request.outputs ?? [];
    const keys = [
      ...checks.map((check) => this.prefix + check.key),
      ...(slot ? [this.prefix + slot.key] : []),
      ...reads.map((key) => this.prefix + key),
      ...budgets.map((budget) => this.prefix + budget.key),
      ...outputs.map((output) => this.outputKey(output.key)),
      ...(outputs.length > 0 ? [this.prefix + OUTPUT_EPOCH_KEY] : []),
    ];
    const args: Array<string | number> = [this.clock ? this.clock.now() : '', checks.length];
    for (const check of checks) args.push(check.window, check.limit, check.amount);
    args.push(slot ? slot.limit : '', slot?.member ?? '', slot?.leaseMs ?? 0, reads.length, budgets.length);
    for (const budget of budgets) args.push(budget.durationMs, budget.limit ?? '');
    args.push(
      outputs.length,
      request.epochId ?? '',
      request.epochSeen?.id ?? '',
      request.epochSeen?.seq ?? 0,
    );
    for (const output of outputs) args.push(output.limit);
    const scripts = this.client as unknown as ScriptCommands;
    const reply = (await this.run(() => scripts.switchboardAdmit(keys.length, ...keys, ...args))).map(Number);
    const now = reply[1]!;
    if (reply[0] === 1) {
      const count = checks.length;
      const readsAt = 2 + count * 2;
      const spentAt = readsAt + reads.length;
      return {
        admitted: true,
        now,
        counts: reply.slice(2, 2 + count),
        resets: reply.slice(2 + count, readsAt),
        reads: reply.slice(readsAt, spentAt),
        spent: reply.slice(spentAt, spentAt + budgets.length),
        outputs: reply.slice(spentAt + budgets.length),
      };
    }
    const output = outputRefusal(reply);
    return {
      admitted: false,
      now,
      failed: output ? -1 : reply[2]! - 1,
      count: reply[3]!,
      reset: reply[4]!,
      reads: reply.slice(5),
      ...(output ? { output } : {}),
    };
  }

  async recordOutput(request: OutputRecording): Promise<OutputRecorded> {
    const keys = [
      this.prefix + outputReceiptKey(request.receipt),
      this.prefix + OUTPUT_EPOCH_KEY,
      ...request.keys.map((key) => this.outputKey(key)),
    ];
    const amount = Math.min(Math.max(0, Math.floor(request.amount)), OUTPUT_COUNTER_MAX);
    const scripts = this.client as unknown as ScriptCommands;
    const reply = await this.run(() =>
      scripts.switchboardRecordOutput(
        keys.length,
        ...keys,
        this.clock ? this.clock.now() : '',
        amount,
        OUTPUT_COUNTER_MAX,
        OUTPUT_BUCKET_GRACE_MS,
        OUTPUT_RECEIPT_TTL_MS,
      ),
    );
    const epochId = String(reply[4] ?? '');
    const counted = 6 + request.keys.length;
    return {
      duplicate: Number(reply[0]) === 2,
      now: Number(reply[1]),
      minute: Number(reply[2]),
      saturated: Number(reply[3]) === 1,
      counts: reply.slice(6, counted).map(Number),
      unknown: reply.slice(counted).map((flag) => Number(flag) === 1),
      ...(epochId !== '' ? { epoch: { id: epochId, seq: Number(reply[5]) } } : {}),
    };
  }

  async markOutputUnknown(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const scripts = this.client as unknown as ScriptCommands;
    const prefixed = keys.map((key) => this.outputKey(key));
    await this.run(() =>
      scripts.switchboardMarkOutputUnknown(
        prefixed.length,
        ...prefixed,
        this.clock ? this.clock.now() : '',
        OUTPUT_BUCKET_GRACE_MS,
      ),
    );
  }

  async ensureOutputEpoch(): Promise<boolean> {
    const scripts = this.client as unknown as ScriptCommands;
    const created = await this.run(() =>
      scripts.switchboardEnsureOutputEpoch(
        1,
        this.prefix + OUTPUT_EPOCH_KEY,
        this.clock ? this.clock.now() : '',
      ),
    );
    return Number(created) === 1;
  }

  async settle(request: SettlementRequest): Promise<void> {
    const { adjustments, release } = request;
    const budgets = request.budgets ?? [];
    if (adjustments.length === 0 && !release && budgets.length === 0) return;
    const keys = [
      ...adjustments.map((adjustment) => this.prefix + adjustment.key),
      ...(release ? [this.prefix + release.key] : []),
      ...budgets.map((budget) => this.prefix + budget.key),
    ];
    const args: Array<string | number> = [this.clock ? this.clock.now() : '', adjustments.length];
    for (const adjustment of adjustments)
      args.push(adjustment.window, adjustment.delta, adjustment.createMinute ? '1' : '0');
    args.push(release?.member ?? '', budgets.length);
    for (const budget of budgets)
      args.push(budget.durationMs, Math.round(budget.amount), budget.raiseInWindow ?? '');
    const scripts = this.client as unknown as ScriptCommands;
    await this.run(() => scripts.switchboardSettle(keys.length, ...keys, ...args));
  }

  isAvailable(): boolean {
    return this.client.status === 'ready';
  }

  async time(): Promise<number> {
    const [seconds, microseconds] = await this.run(() => this.client.time());
    return Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
  }

  async ping(): Promise<void> {
    await this.run(() => this.client.ping());
  }

  async get(key: string): Promise<string | null> {
    return this.run(() => this.client.get(this.prefix + key));
  }

  async getMany(keys: readonly string[]): Promise<Array<string | null>> {
    if (keys.length === 0) return [];
    return this.run(() => this.client.mget(keys.map((key) => this.prefix + key)));
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.run(() => this.client.set(this.prefix + key, value, 'PX', Math.max(1, Math.ceil(ttlMs))));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    const result = await this.run(() =>
      this.client.set(this.prefix + key, value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'),
    );
    return result === 'OK';
  }

  async delete(key: string): Promise<void> {
    await this.run(() => this.client.del(this.prefix + key));
  }

  async increment(key: string, amount: number, ttlMs: number): Promise<number> {
    const value = await this.run(() =>
      this.client.eval(INCREMENT_SCRIPT, 1, this.prefix + key, amount, Math.max(1, Math.ceil(ttlMs))),
    );
    return Number(value);
  }

  async incrementMany(
    counters: ReadonlyArray<{ key: string; amount: number }>,
    ttlMs: number,
  ): Promise<void> {
    if (counters.length === 0) return;
    const keys = counters.map((counter) => this.prefix + counter.key);
    const amounts = counters.map((counter) => counter.amount);
    await this.run(() =>
      this.client.eval(
        INCREMENT_MANY_SCRIPT,
        keys.length,
        ...keys,
        Math.max(1, Math.ceil(ttlMs)),
        ...amounts,
      ),
    );
  }

  async cacheGet(key: string): Promise<string | undefined> {
    return (await this.run(() => this.client.get(this.prefix + key))) ?? undefined;
  }

  async cacheSet(key: string, value: string, ttlMs: number): Promise<void> {
    await this.set(key, value, ttlMs);
  }

  async cacheDelete(pattern: string): Promise<number> {
    return unlinkMatching(this.client, redisMatchPattern(this.prefix, pattern), (command) =>
      this.run(command),
    );
  }

  /** Waits until the first connection is ready, or `timeoutMs` passes; true when connected. */
  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.client.status === 'ready') return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.client.once('ready', onReady);
    });
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.run(() => this.client.publish(this.prefix + channel, message));
  }

  async subscribe(
    channel: string,
    onMessage: (message: string) => void,
    onResync: () => void,
  ): Promise<void> {
    this.handlers.set(this.prefix + channel, { onMessage, onResync });
    if (!this.subscriber) {
      const subscriber = createClient(this.url, { enableOfflineQueue: true, autoResubscribe: false });
      this.subscriber = subscriber;
      subscriber.on('message', (name: string, message: string) =>
        this.handlers.get(name)?.onMessage(message),
      );
      let connectedBefore = false;
      // On every (re)connection: subscribe to every channel, and let caches drop what they hold,
      // because messages published while disconnected are lost.
      subscriber.on('ready', () => {
        subscriber.subscribe(...this.handlers.keys()).catch(() => {});
        if (connectedBefore) for (const handler of this.handlers.values()) handler.onResync();
        connectedBefore = true;
      });
      subscriber.on('close', () => {
        if (connectedBefore) for (const handler of this.handlers.values()) handler.onResync();
      });
    } else if (this.subscriber.status === 'ready') {
      await this.subscriber.subscribe(this.prefix + channel);
    }
  }

  async close(): Promise<void> {
    this.client.disconnect();
    this.subscriber?.disconnect();
  }

  /** An output counter's stored base, bounded in bytes together with this store's prefix. */
  private outputKey(base: string): string {
    return this.prefix + storedOutputBase(this.prefix, base);
  }

  private run<T>(command: () => Promise<T>): Promise<T> {
    if (this.client.status !== 'ready') {
      return Promise.reject(new SharedStoreUnavailableError(`redis connection is ${this.client.status}`));
    }
    return withTimeout(command(), this.commandTimeoutMs);
  }
}

/** The output refusal of an admission reply (codes 2–4 of the admission script), if it is one. */
function outputRefusal(reply: readonly number[]): OutputRefusal | undefined {
  switch (reply[0]) {
    case 2:
      return { state: 'exceeded', index: reply[2]! - 1, recorded: reply[3]! };
    case 3:
      return { state: 'unknown', index: reply[2]! - 1 };
    case 4:
      return { state: 'unavailable', until: reply[3]! };
    default:
      return undefined;
  }
}

function createClient(
  url: string,
  overrides: { enableOfflineQueue?: boolean; autoResubscribe?: boolean } = {},
): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: overrides.enableOfflineQueue ?? false,
    autoResubscribe: overrides.autoResubscribe ?? true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1_000),
    enableAutoPipelining: true,
  });
  // Errors surface through failing commands and readiness; an unhandled 'error' event would crash.
  client.on('error', () => {});
  return client;
}
