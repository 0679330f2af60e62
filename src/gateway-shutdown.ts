/**
 * Takes a running gateway down in order, within bounds (issues 9 and 31): not ready at once, serving
 * through the pre-stop wait, in-flight requests finished within the grace period (streams still open
 * then end with an in-band error), then the spend flush with what is left of the grace period but the
 * closing reserve (what is still unwritten is spilled for the next start), then every connection closed
 * within that reserve. So a stalled database costs no time past the grace period. A step that keeps
 * the process waiting is logged at warn while it waits; none waits past its deadline.
 */

import type { App } from './http/app-types.ts';
import { type WaitLog, waitBounded } from './lib/bounded-wait.ts';
import type { Readiness } from './observability/readiness.ts';

/** The spend flush always gets at least this long, even when the HTTP drain used up the grace period. */
const FLUSH_FLOOR_MS = 500;
/** The end of the grace period kept for closing connections (upstreams, MCP, Redis, the databases). */
const CLOSE_MS = 500;

/** One thing to close, in order, under the closing deadline. */
export interface ClosingStep {
  label: string;
  close(): Promise<unknown>;
}

export interface ShutdownParts {
  app: App;
  readiness: Readiness;
  logger: WaitLog;
  /** Stops background work from claiming more (workers, timers); resolves when their rounds end. */
  stopBackground(): Promise<unknown>;
  /** Flushes spend until the deadline (epoch ms), then spills the rest. */
  flushSpend(deadlineAt: number): Promise<void>;
  /** Closed in order after the flush, each under the closing deadline. */
  closing: readonly ClosingStep[];
}

export async function shutDownGateway(
  parts: ShutdownParts,
  graceMs: number,
  preStopMs: number,
): Promise<void> {
  const { readiness, logger } = parts;
  readiness.startDraining();
  const background = parts.stopBackground();
  if (preStopMs > 0) await new Promise((resolve) => setTimeout(resolve, preStopMs));
  const graceEnd = Date.now() + graceMs;
  await drainHttp(parts.app, graceMs, logger);
  await waitBounded('background workers', background, Math.max(graceEnd, Date.now()), logger);
  await parts.flushSpend(Math.max(graceEnd - CLOSE_MS, Date.now() + FLUSH_FLOOR_MS));
  const closeBy = Date.now() + CLOSE_MS;
  for (const step of parts.closing) await waitBounded(step.label, step.close(), closeBy, logger);
}

/**
 * Stops accepting and lets in-flight requests finish within `graceMs`; streams still open then get
 * their error event, and a second later whatever is left (or still flushing) is closed.
 */
async function drainHttp(app: App, graceMs: number, logger: WaitLog): Promise<void> {
  const closing = app.close();
  // Sockets that turn idle after the close began would wait for the keep-alive timeout otherwise.
  const idleSweep = setInterval(() => app.server.closeIdleConnections(), 100);
  let forceClose: NodeJS.Timeout | undefined;
  const deadline = setTimeout(() => {
    const cut = app.openStreams.cutAll();
    if (cut > 0) logger.warn({ streams: cut }, 'grace period over: open streams ended with an error event');
    forceClose = setTimeout(() => app.server.closeAllConnections(), cut > 0 ? 1_000 : 0);
  }, graceMs);
  try {
    await closing;
  } finally {
    clearInterval(idleSweep);
    clearTimeout(deadline);
    clearTimeout(forceClose);
  }
}
