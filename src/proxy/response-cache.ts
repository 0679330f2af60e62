/**
 * The response cache's decisions and entries (docs/cache.md): whether a request may read or write the
 * cache (settings, the key's and team's switch, Cache-Control and the body's `cache` object, MCP tools),
 * the entry key (a SHA-256 of the request's fields in canonical JSON, all but those known not to change
 * the answer, scoped to a team, a key or everyone, under the model group that answered), and the stored
 * form of an answer: the canonical JSON answer, or a stream's chunks as they were sent, replayed
 * in their original format. A store that fails degrades to no caching, never to an error.
 */
import { createHash } from 'node:crypto';
import type { Caller } from '../canonical/caller.ts';
import { type ChatCompletionChunk, chunkFromObject, type StreamChunk } from '../canonical/chat-chunk.ts';
import { type ChatRequest, nativeBody } from '../canonical/chat-request.ts';
import type { ChatCompletion } from '../canonical/chat-response.ts';
import { chunkUsage, type Usage } from '../canonical/usage.ts';
import type { ResponseCacheSettings } from '../config/config.ts';
import {
  RESPONSE_CACHE_FIXED_FIELDS,
  RESPONSE_CACHE_UNKEYED_FIELDS,
} from '../config/response-cache-settings.ts';
import { canonicalJson } from '../lib/canonical-json.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import {
  RESPONSE_CACHE_VERSION as CACHE_VERSION,
  type ResponseCacheKeyParts,
  responseCacheKey,
} from '../store/shared/response-cache-keys.ts';
import type { SharedStore } from '../store/shared/shared-store.ts';

export type CacheStatus = 'hit' | 'miss' | 'bypass';

/** What the cache does for one request. */
export interface CachePlan {
  status: CacheStatus;
  /** Set unless bypassed: the key under the requested model, and its parts. */
  key?: string;
  parts?: ResponseCacheKeyParts;
  read: boolean;
  write: boolean;
  ttlMs: number;
}

export type CacheEntry =
  | { kind: 'json'; response: ChatCompletion; json?: string; native?: string }
  | { kind: 'stream'; chunks: Array<{ json: string; usageOnly: boolean; native?: string }> };

const ENDPOINTS: Readonly<Record<string, ResponseCacheSettings['endpoints'][number]>> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/responses': 'responses',
  '/v1/messages': 'messages',
};

const BYPASS: CachePlan = { status: 'bypass', read: false, write: false, ttlMs: 0 };

export class ResponseCache {
  private readonly settings: ResponseCacheSettings;
  private readonly store: SharedStore;
  private readonly metrics: Metrics;
  private readonly logger: Logger;
  /** Top-level request fields left out of the hash. */
  private readonly unkeyed: ReadonlySet<string>;

  constructor(options: {
    settings: ResponseCacheSettings;
    store: SharedStore;
    metrics: Metrics;
    logger: Logger;
  }) {
    this.settings = options.settings;
    this.store = options.store;
    this.metrics = options.metrics;
    this.logger = options.logger;
    const unkeyed = new Set([
      ...RESPONSE_CACHE_FIXED_FIELDS,
      ...RESPONSE_CACHE_UNKEYED_FIELDS,
      ...options.settings.ignored_key_fields,
    ]);
    for (const field of options.settings.extra_key_fields) unkeyed.delete(field);
    this.unkeyed = unkeyed;
  }

  /**
   * Decides for one request, and removes the body's `cache` object from it (never sent upstream).
   * `headers` are the caller's request headers (Cache-Control).
   */
  plan(
    request: ChatRequest,
    caller: Caller,
    endpointPath: string,
    headers: Readonly<Record<string, string | string[] | undefined>> | undefined,
    usesMcpTools: boolean,
  ): CachePlan {
    const control = takeCacheObject(request);
    const endpoint = ENDPOINTS[endpointPath];
    const enabled = caller.cacheEnabled ?? this.settings.enabled;
    if (!enabled || endpoint === undefined || !this.settings.endpoints.includes(endpoint) || usesMcpTools) {
      return this.bypass(enabled);
    }
    const cacheControl = String(headers?.['cache-control'] ?? '').toLowerCase();
    const noStore = cacheControl.includes('no-store') || control['no-store'] === true;
    const noCache = cacheControl.includes('no-cache') || control['no-cache'] === true;
    if (noStore && noCache) return this.bypass(true);
    // A per-request ttl may shorten the configured one, never lengthen it (clamped, like LiteLLM's lenient
    // cache controls, which ignore a value they cannot use).
    const configured = this.settings.ttl_seconds;
    const ttlSeconds =
      typeof control.ttl === 'number' && control.ttl > 0 ? Math.min(control.ttl, configured) : configured;
    const parts = this.keyParts(request, caller, endpointPath);
    return {
      status: 'miss',
      key: responseCacheKey(parts),
      parts,
      read: !noCache,
      write: !noStore,
      ttlMs: Math.round(ttlSeconds * 1000),
    };
  }

  /** The stored entry of a plan that may read, or undefined (a miss, or a store that failed). */
  async get(plan: CachePlan): Promise<CacheEntry | undefined> {
    if (!plan.read || plan.key === undefined) return undefined;
    try {
      const text = await this.store.cacheGet(plan.key);
      if (text === undefined) {
        this.metrics.cacheRequests.inc({ outcome: 'miss' });
        return undefined;
      }
      const entry = JSON.parse(text) as CacheEntry & { v?: number };
      if (entry.v !== CACHE_VERSION) return undefined;
      this.metrics.cacheRequests.inc({ outcome: 'hit' });
      this.metrics.cacheBytes.inc({ direction: 'read' }, text.length);
      return entry;
    } catch (error) {
      this.failed('read', error);
      return undefined;
    }
  }

  /**
   * Stores an answer for a plan that may write (entries over max_entry_bytes are skipped). An answer of
   * a fallback group (`answeredBy`, when it is not the requested group) is stored under that group's
   * model segment: only callers who ask for, and so may use, that group read it.
   */
  async put(plan: CachePlan, entry: CacheEntry, answeredBy?: string): Promise<void> {
    if (!plan.write || plan.key === undefined || plan.parts === undefined) return;
    const key = answeredBy === undefined ? plan.key : responseCacheKey({ ...plan.parts, model: answeredBy });
    const text = JSON.stringify({ v: CACHE_VERSION, ...entry });
    if (Buffer.byteLength(text) > this.settings.max_entry_bytes) {
      this.metrics.cacheRequests.inc({ outcome: 'too_large' });
      return;
    }
    try {
      await this.store.cacheSet(key, text, plan.ttlMs);
      this.metrics.cacheBytes.inc({ direction: 'written' }, text.length);
    } catch (error) {
      this.failed('write', error);
    }
  }

  /** A stream recorder that keeps the chunks as sent, up to max_entry_bytes. */
  recorder(plan: CachePlan): StreamRecorder | undefined {
    return plan.write && plan.key !== undefined
      ? new StreamRecorder(this.settings.max_entry_bytes)
      : undefined;
  }

  private bypass(enabled: boolean): CachePlan {
    if (enabled) this.metrics.cacheRequests.inc({ outcome: 'bypass' });
    return BYPASS;
  }

  private failed(operation: 'read' | 'write', error: unknown): void {
    this.metrics.cacheRequests.inc({ outcome: `${operation}_error` });
    this.logger.warn({ err: error }, `response cache ${operation} failed; answering without the cache`);
  }

  /**
   * The hash covers every field sent upstream except the unkeyed ones, in canonical JSON (key order
   * does not matter). A Messages body goes upstream as it came (to an Anthropic deployment) or as the
   * canonical request derived from it alone, so its own fields are hashed. The model is not hashed: it
   * is the key's own segment, which lets a fallback's answer be stored under the group that gave it.
   */
  private keyParts(request: ChatRequest, caller: Caller, endpointPath: string): ResponseCacheKeyParts {
    const fields = request[nativeBody]?.body ?? request;
    const text = `${CACHE_VERSION}\n${endpointPath}\n${request.stream === true}\n${canonicalJson(fields, this.unkeyed)}`;
    const hash = createHash('sha256').update(text).digest('hex');
    const scope = this.settings.scope;
    const scopeTag =
      scope === 'global'
        ? 'g'
        : scope === 'team' && caller.teamId !== null
          ? `t=${caller.teamId}`
          : `k=${caller.keyId ?? caller.kind}`;
    return { team: caller.teamId, scopeTag, model: request.model, hash };
  }
}

/** Collects a stream's chunks for the cache; gives up (and keeps nothing) past the entry size limit. */
export class StreamRecorder {
  private readonly maxBytes: number;
  private readonly chunks: Array<{ json: string; usageOnly: boolean; native?: string }> = [];
  private bytes = 0;
  private abandoned = false;
  private usage: Usage | undefined;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  add(chunk: StreamChunk): void {
    if (this.abandoned) return;
    const json = chunk.json;
    this.bytes += json.length + (chunk.native?.length ?? 0);
    if (this.bytes > this.maxBytes) {
      this.abandoned = true;
      this.chunks.length = 0;
      return;
    }
    if (chunk.usage) this.usage = chunk.usage;
    this.chunks.push({
      json,
      usageOnly: chunk.usageOnly,
      ...(chunk.native !== undefined ? { native: chunk.native } : {}),
    });
  }

  /** The entry of a stream that completed with its usage; undefined otherwise (never cached). */
  entry(): CacheEntry | undefined {
    return this.abandoned || this.usage === undefined ? undefined : { kind: 'stream', chunks: this.chunks };
  }
}

/** A cached stream's chunks, replayed as canonical chunks. */
export function* replayChunks(entry: Extract<CacheEntry, { kind: 'stream' }>): Generator<StreamChunk> {
  for (const stored of entry.chunks) {
    const parsed = JSON.parse(stored.json) as ChatCompletionChunk;
    const chunk = chunkFromObject(parsed, chunkUsage(parsed));
    if (stored.native !== undefined) chunk.native = stored.native;
    yield chunk;
  }
}

/** The usage a cached answer reported. */
export function usageOfEntry(entry: CacheEntry): Usage | undefined {
  if (entry.kind === 'json') return entry.response.usage;
  for (let index = entry.chunks.length - 1; index >= 0; index--) {
    const usage = chunkUsage(JSON.parse(entry.chunks[index]!.json));
    if (usage) return usage;
  }
  return undefined;
}

/** Removes LiteLLM's per-request `cache` object from the body, returning it. */
function takeCacheObject(request: ChatRequest): Record<string, unknown> {
  const control = request.cache;
  if (control === undefined) return {};
  delete request.cache;
  return control !== null && typeof control === 'object' && !Array.isArray(control)
    ? (control as Record<string, unknown>)
    : {};
}
