/**
 * Assembles spend accounting from the configuration: the price book, the writer of the configured
 * `spend_ingestion_mode`, the spill folder and its replay (spend_spill_dir), and in outbox mode the
 * settlement worker with its readiness probes (`telemetry_database`, `telemetry_worker_database`). The
 * text pipeline receives `accounting`.
 */
import type { Config } from '../config/config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ReadinessProbe } from '../observability/readiness.ts';
import type { Database } from '../store/db/create-database.ts';
import { SpendRepository } from '../store/db/repositories/spend-repository.ts';
import { ChargesInFlight } from './charges-in-flight.ts';
import { LegacySpendWriter } from './legacy-spend-writer.ts';
import { OutboxSettler } from './outbox-settler.ts';
import { usageBounds } from './plausible-usage.ts';
import { PriceBook } from './price-book.ts';
import { SpendSpill } from './spend-spill.ts';
import { SpillReplay } from './spend-spill-replay.ts';
import { OutboxSpendWriter, type SpendWriter } from './spend-writer.ts';

/** What the pipeline's request charge needs (the same shape proxy/ declares as SpendAccounting). */
export interface PipelineAccounting {
  costOf(
    deploymentId: string,
    usage: Parameters<PriceBook['costOf']>[1],
    upstreamModel: string,
    units?: Parameters<PriceBook['costOf']>[3],
  ): number | null;
  usageBound(deploymentId: string): number;
  writer: SpendWriter;
  metrics: Metrics;
  logger: Logger;
  now(): number;
  inFlight: ChargesInFlight;
}

export interface SpendAccountingParts {
  accounting: PipelineAccounting;
  repository: SpendRepository;
  /** Outbox mode only. */
  settler: OutboxSettler | undefined;
  probes: ReadinessProbe[];
  /** Deployments without a known price, for the start-up log. */
  warnings: string[];
  /** Writes spilled records now (tests); resolves when the round ends. */
  replaySpill(): Promise<void>;
  /** Flushes spend until `deadlineAt` (epoch ms), spills the rest, stops the workers within it. */
  close(deadlineAt?: number): Promise<void>;
}

export async function createSpendAccounting(deps: {
  config: Config;
  database: Database;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}): Promise<SpendAccountingParts> {
  const { config, database, clock, logger, metrics } = deps;
  const general = config.general_settings;
  const repository = new SpendRepository(database.db, database.dialect);
  const { book, warnings } = PriceBook.fromConfig(config);
  const outbox = general.spend_ingestion_mode === 'outbox';
  const spill = new SpendSpill(general.spend_spill_dir, await repository.databaseId());
  const replay = new SpillReplay({ spill, repository, logger, metrics, mode: outbox ? 'outbox' : 'legacy' });
  replay.nudge(); // what an earlier process spilled
  const writerOptions = {
    repository,
    clock,
    logger,
    metrics,
    waitLimitMs: general.spend_finalization_timeout_ms,
  };
  const writer: SpendWriter = outbox
    ? new OutboxSpendWriter({
        ...writerOptions,
        finalizationTimeoutMs: general.spend_finalization_timeout_ms,
      })
    : new LegacySpendWriter({ ...writerOptions, spill, onSpilled: () => replay.nudge() });
  const inFlight = new ChargesInFlight();
  const settler = outbox ? new OutboxSettler({ repository, clock, logger, metrics }) : undefined;
  settler?.start();
  const probes: ReadinessProbe[] = settler
    ? [
        { name: 'telemetry_database', check: () => database.ping() },
        {
          name: 'telemetry_worker_database',
          check: async () => {
            settler.checkFresh();
            await database.ping();
          },
        },
      ]
    : [];
  return {
    accounting: {
      costOf: (deploymentId, usage, upstreamModel, units) =>
        book.costOf(deploymentId, usage, upstreamModel, units),
      usageBound: usageBounds(config),
      writer,
      metrics,
      logger,
      now: () => clock.now(),
      inFlight,
    },
    repository,
    settler,
    probes,
    warnings,
    replaySpill: async () => {
      replay.nudge();
      await replay.settled();
    },
    async close(deadlineAt = Date.now() + 5_000) {
      // Streams cut at the end of the grace period settle when their sockets close, which can come
      // after the server's close: let them hand over their records, keeping half the time for the flush.
      const open = inFlight.size;
      if (!(await inFlight.settledBy(Date.now() + (deadlineAt - Date.now()) / 2)))
        logger.warn(
          { open, unsettled: inFlight.size },
          'spend flush started with requests still unsettled: a record that comes later is spilled (legacy mode)',
        );
      replay.stop();
      await writer.close(deadlineAt);
      await settler?.stop(deadlineAt);
    },
  };
}
