/**
 * SharedStore on Redis (ioredis). Commands fail fast: no offline queue while disconnected, and a
 * bounded command timeout (store-timeout.ts). An admission carries the time this store gives up on it,
 * in Redis's clock, so one that reaches Redis later changes nothing; one answered too late is undone.
 */
import type { Redis } from 'ioredis';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { createRedisClient } from './create-redis-client.ts';
import {
  OUTPUT_BUCKET_GRACE_MS,
  OUTPUT_COUNTER_MAX,
  OUTPUT_EPOCH_KEY,
  OUTPUT_RECEIPT_TTL_MS,
  type OutputRecorded,
  type OutputRecording,
  outputReceiptKey,
  storedOutputBase,
} from './output-counters.ts';
import type { AdmissionRequest, AdmissionResponse, SettlementRequest } from './rate-limit-counters.ts';
import {
  admissionCall,
  admissionReply,
  type KeyNames,
  settlementCall,
  undoAdmission,
} from './redis-admission.ts';
import {
  ENSURE_OUTPUT_EPOCH_SCRIPT,
  MARK_OUTPUT_UNKNOWN_SCRIPT,
  RECORD_OUTPUT_SCRIPT,
} from './redis-output-scripts.ts';
import { redisMatchPattern, unlinkMatching } from './redis-pattern-delete.ts';
import { ADMIT_SCRIPT, SETTLE_SCRIPT } from './redis-rate-limit-scripts.ts';
import { RedisSubscriptions } from './redis-subscriptions.ts';
import { type SharedStore, SharedStoreUnavailableError } from './shared-store.ts';
import { StoreClockOffset } from './store-clock-offset.ts';
import { type TimeoutOptions, withTimeout } from './store-timeout.ts';

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

/**
 * How many command timeouts a slow admission is waited for while other replies keep arriving. Its
 * script can take effect only within the first (its deadline), so the answer, when it comes, says for
 * sure whether it did: waiting for it never counts a request twice, as sending it again would.
 */
const ADMISSION_PATIENCE = 5;

export interface RedisSharedStoreOptions {
  url: string;
  /** Prepended to every key and channel, so deployments (and tests) can share one Redis. */
  prefix: string;
  commandTimeoutMs: number;
  /** Time for rate-limit windows; by default the Redis server's clock (TIME). Tests inject one. */
  clock?: Clock;
  /** This process's clock, whose offset to Redis TIME dates admission deadlines (default: the system's). */
  processClock?: Clock;
}

export class RedisSharedStore implements SharedStore {
  readonly kind = 'redis' as const;
  readonly prefix: string;
  readonly client: Redis;
  private readonly commandTimeoutMs: number;
  private readonly clock: Clock | undefined;
  private readonly offset: StoreClockOffset;
  private readonly names: KeyNames;
  /** The latest sampling of Redis TIME (resolves false when it failed). */
  private clockSampled: Promise<boolean> = Promise.resolve(false);
  /** performance.now() of the last reply on the command connection. */
  private lastReplyAt = 0;
  /** Admissions answered after this store gave up on them, and undone (for diagnostics). */
  lateAdmissions = 0;
  private readonly subscriptions: RedisSubscriptions;

  constructor(options: RedisSharedStoreOptions) {
    this.subscriptions = new RedisSubscriptions(options.url);
    this.prefix = options.prefix;
    this.commandTimeoutMs = options.commandTimeoutMs;
    this.clock = options.clock;
    this.offset = new StoreClockOffset(options.processClock ?? systemClock);
    this.names = {
      key: (name) => this.prefix + name,
      outputKey: (base) => this.outputKey(base),
    };
    this.client = createRedisClient(options.url);
    // Each (re)connection samples Redis TIME, so the first admission already carries a deadline.
    this.client.on('ready', () => void this.sampleClock());
    this.client.defineCommand('switchboardAdmit', { lua: ADMIT_SCRIPT });
    this.client.defineCommand('switchboardSettle', { lua: SETTLE_SCRIPT });
    this.client.defineCommand('switchboardRecordOutput', { lua: RECORD_OUTPUT_SCRIPT });
    this.client.defineCommand('switchboardMarkOutputUnknown', { lua: MARK_OUTPUT_UNKNOWN_SCRIPT });
    this.client.defineCommand('switchboardEnsureOutputEpoch', { lua: ENSURE_OUTPUT_EPOCH_SCRIPT });
  }

  async admit(request: AdmissionRequest): Promise<AdmissionResponse> {
    const sentAt = this.offset.now();
    const now = this.clock ? this.clock.now() : '';
    const { keys, args } = admissionCall(request, this.names, now, this.deadline(request, now));
    const scripts = this.client as unknown as ScriptCommands;
    const reply = await this.run(() => scripts.switchboardAdmit(keys.length, ...keys, ...args), {
      onLate: (late) => this.undoLate(request, late.map(Number)),
      signal: request.signal,
      patience: ADMISSION_PATIENCE,
    });
    const response = admissionReply(reply.map(Number), request);
    if (response === 'late') {
      throw new SharedStoreUnavailableError('the admission reached Redis after its deadline', 'late');
    }
    if (!this.clock) this.offset.observe(response.now, sentAt);
    return response;
  }

  /**
   * The store-clock time after which an admission must change nothing: when this store gives up on it
   * (its command timeout), or the request's own deadline if that is sooner. None until the offset to
   * the Redis clock is known (the first connection samples it).
   */
  private deadline(request: AdmissionRequest, now: number | ''): number | '' {
    const own = now === '' ? this.offset.storeTime() : now;
    const mine = own === undefined ? undefined : own + this.commandTimeoutMs;
    const deadline =
      mine === undefined ? request.deadline : Math.min(mine, request.deadline ?? Number.POSITIVE_INFINITY);
    return deadline ?? '';
  }

  /** An admission answered after this store gave up on it: whatever it took is given back. */
  private undoLate(request: AdmissionRequest, reply: readonly number[]): void {
    const response = admissionReply(reply, request);
    if (response === 'late' || !response.admitted) return;
    this.lateAdmissions++;
    this.settle(undoAdmission(request, response.now)).catch(() => {
      // Its leases still expire by themselves; its counters keep the charge until their window ends.
    });
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
    const call = settlementCall(request, this.names, this.clock ? this.clock.now() : '');
    if (!call) return;
    const scripts = this.client as unknown as ScriptCommands;
    await this.run(() => scripts.switchboardSettle(call.keys.length, ...call.keys, ...call.args));
  }

  isAvailable(): boolean {
    return this.client.status === 'ready';
  }

  async time(): Promise<number> {
    const sentAt = this.offset.now();
    const [seconds, microseconds] = await this.run(() => this.client.time());
    const now = Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
    this.offset.observe(now, sentAt);
    return now;
  }

  private async sampleClock(): Promise<void> {
    this.clockSampled = this.time().then(
      () => true,
      () => false,
    );
    await this.clockSampled;
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

  /**
   * Waits until the first connection is ready and Redis's clock was sampled, or `timeoutMs` passes;
   * true when connected.
   */
  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    const ready = await this.waitForConnection(timeoutMs);
    if (ready) await this.clockSampled;
    return ready;
  }

  private waitForConnection(timeoutMs: number): Promise<boolean> {
    if (this.client.status === 'ready') return Promise.resolve(true);
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
    await this.subscriptions.add(this.prefix + channel, { onMessage, onResync });
  }

  async close(): Promise<void> {
    this.client.disconnect();
    this.subscriptions.close();
  }

  /** An output counter's stored base, bounded in bytes together with this store's prefix. */
  private outputKey(base: string): string {
    return this.prefix + storedOutputBase(this.prefix, base);
  }

  private run<T>(
    command: () => Promise<T>,
    options: Omit<TimeoutOptions<T>, 'lastReplyAt'> = {},
  ): Promise<T> {
    if (this.client.status !== 'ready') {
      return Promise.reject(new SharedStoreUnavailableError(`redis connection is ${this.client.status}`));
    }
    if (options.signal?.aborted) {
      return Promise.reject(new SharedStoreUnavailableError('the caller stopped waiting', 'silent'));
    }
    const sent = command();
    // Any reply, an error reply too, shows the connection is alive (a timeout is then slow, not silent).
    const replied = () => {
      this.lastReplyAt = performance.now();
    };
    sent.then(replied, replied);
    return withTimeout(sent, this.commandTimeoutMs, { lastReplyAt: () => this.lastReplyAt, ...options });
  }
}
