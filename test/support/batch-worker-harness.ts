/**
 * A batch worker against a real database (one schema per describe) with scripted pipelines: chat items
 * answer `{"echo": <content>}`, a content in `refusals` is refused with that error, and a content
 * registered with `hold()` waits until released (a call in flight). Every call's content is recorded in
 * `calls`. Time is a manual clock. Call inside a describe: it registers its own beforeAll/afterAll.
 */
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll } from 'vitest';
import { BatchFiles } from '../../src/batch/batch-files.ts';
import { BatchWorker, type BatchWorkerOptions } from '../../src/batch/batch-worker.ts';
import type { ItemPipelines } from '../../src/batch/item-runner.ts';
import type { Caller } from '../../src/canonical/caller.ts';
import { masterCaller } from '../../src/identity/authenticator.ts';
import type { GatewayError } from '../../src/lib/gateway-error.ts';
import type { Database } from '../../src/store/db/create-database.ts';
import { BatchRepository } from '../../src/store/db/repositories/batch-repository.ts';
import { type Backend, openBackendDatabase } from './backends.ts';
import { chatBatchRow, chatItemRows } from './batch-rows.ts';
import { ManualClock } from './manual-clock.ts';

export interface Hold {
  reached: Promise<void>;
  release(): void;
}

export interface BatchOptions {
  status?: string;
  ownerKeyId?: string;
  /** Seconds from now until the window closes (default 24 h). */
  window?: number;
}

export function batchWorkerHarness(makeBackend: () => Backend) {
  const clock = new ManualClock();
  const calls: string[] = [];
  const refusals = new Map<string, GatewayError>();
  const holds = new Map<string, { reached: PromiseWithResolvers<void>; held: PromiseWithResolvers<void> }>();
  const state = {} as { backend: Backend; database: Database; batches: BatchRepository; files: BatchFiles };

  beforeAll(async () => {
    state.backend = makeBackend();
    state.database = await openBackendDatabase(state.backend);
    state.batches = new BatchRepository(state.database.db);
    state.files = new BatchFiles({
      db: state.database.db,
      store: 'database',
      clock,
      limits: { maxLines: 50_000, maxLineBytes: 1_000_000, lineSetting: 'batch_line_max_bytes' },
    });
  });
  afterAll(async () => {
    await state.database?.close();
    await state.backend?.cleanup();
  });

  const pipelines: ItemPipelines = {
    modalities: { embed: () => Promise.reject(new Error('not used')) },
    text: {
      run: async (request) => {
        const content = String(request.messages[0]?.content);
        calls.push(content);
        const refusal = refusals.get(content);
        if (refusal) throw refusal;
        const hold = holds.get(content);
        if (hold) {
          hold.reached.resolve();
          await hold.held.promise;
        }
        return {
          kind: 'json',
          response: {} as never,
          json: JSON.stringify({ echo: content }),
          deploymentId: 'd',
          attempts: 1,
          headers: {},
        };
      },
    },
  };

  return {
    clock,
    calls,
    refusals,
    get db() {
      return state.database;
    },
    get batches() {
      return state.batches;
    },
    get files() {
      return state.files;
    },

    /** Calls with this content wait until released. */
    hold(content: string): Hold {
      const entry = { reached: Promise.withResolvers<void>(), held: Promise.withResolvers<void>() };
      holds.set(content, entry);
      return { reached: entry.reached.promise, release: () => entry.held.resolve() };
    },

    worker(overrides: Partial<BatchWorkerOptions> = {}): BatchWorker {
      const owner = (keyId: string): Caller => ({ ...masterCaller, kind: 'api_key', keyId });
      return new BatchWorker({
        db: state.database.db,
        dialect: state.database.dialect,
        files: state.files,
        pipelines,
        callerOfKey: async (keyId) => owner(keyId),
        clock,
        workerId: 'w1',
        ...overrides,
      });
    },

    async createBatch(id: string, contents: readonly string[], options: BatchOptions = {}): Promise<void> {
      const now = Math.floor(clock.now() / 1000);
      await state.batches.create(
        chatBatchRow(id, now, contents.length, {
          owner_key_id: options.ownerKeyId ?? 'key-1',
          status: options.status ?? 'in_progress',
          expires_at: now + (options.window ?? 86_400),
        }),
        chatItemRows(contents),
      );
    },

    /** The JSON lines of a batch file (none for a null id). */
    async lines(fileId: string | null | undefined): Promise<Array<Record<string, any>>> {
      if (!fileId) return [];
      const file = await state.files.get(fileId, { all: true });
      return (await text(await state.files.content(file!)))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
    },
  };
}

/** Polls `check` until it holds, failing with `what` after five seconds (no fixed sleeps). */
export async function eventually(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  for (const deadline = Date.now() + 5_000; !(await check()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
