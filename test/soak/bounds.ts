/**
 * The soak's bounds, each with why it is what it is. The trend bounds come from measured noise of flat
 * runs on this 2-core machine (docs/reliability.md, "Soak"); change them only with new measurements.
 */

/** Share of the load phase (by time) left out of the trend fits: V8's heap and JIT reach their working size. */
export const WARMUP_FRACTION = 0.2;

/** Largest RSS growth allowed after the warm-up, extrapolated to ten minutes (MB). PROVISIONAL. */
export const RSS_MAX_GROWTH_MB_PER_10_MIN = 24;

/** Largest rise of the mean event-loop delay after the warm-up, extrapolated to ten minutes (ms). PROVISIONAL. */
export const LAG_MAX_GROWTH_MS_PER_10_MIN = 5;

/** Descriptors and sockets allowed above the idle baseline once the load stopped and settled. PROVISIONAL. */
export const DESCRIPTOR_ALLOWANCE = 4;

/** Longest the settle poll waits for descriptors to return: PostgreSQL's idle clients close after 10 s. */
export const SETTLE_DEADLINE_MS = 45_000;

/** Client-side deadline of every request: the fakes answer within ~50 ms, so 5 s is far past healthy. */
export const DEADLINE_MS = 5_000;

/** Failed requests allowed, as a share of those sent: one in a thousand. PROVISIONAL. */
export const MAX_ERROR_RATIO = 0.001;
