/**
 * Waiting with a deadline for shutdown steps (issue 31): the step either ends or is given up at its
 * deadline, and while it keeps the process waiting a warn line says what it waits for, so an operator
 * reading the logs of a slow stop sees the database (or whatever) that holds it up.
 */

export interface WaitLog {
  warn(fields: object, message: string): void;
}

export interface BoundedWaitOptions {
  /** The first warn after this long (default 250 ms), then one per second. */
  firstWarnMs?: number;
  /** Fields added to each warn line (e.g. how many records are still unwritten). */
  detail?: () => object;
}

/** True when `work` ended (or failed) before `deadlineAt` (epoch ms), false when it was given up. */
export async function waitBounded(
  label: string,
  work: Promise<unknown>,
  deadlineAt: number,
  log: WaitLog,
  options: BoundedWaitOptions = {},
): Promise<boolean> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const given = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, deadlineAt - started));
  });
  const warn = () =>
    log.warn(
      {
        waiting_ms: Date.now() - started,
        deadline_in_ms: Math.max(0, deadlineAt - Date.now()),
        ...options.detail?.(),
      },
      `shutdown is waiting for ${label}`,
    );
  let warner: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    warn();
    warner = setInterval(warn, 1_000);
  }, options.firstWarnMs ?? 250);
  try {
    const outcome = await Promise.race([work.then(done, done), given]);
    if (outcome === 'late')
      log.warn(
        { waited_ms: Date.now() - started, ...options.detail?.() },
        `shutdown gave up waiting for ${label} at its deadline`,
      );
    return outcome !== 'late';
  } finally {
    clearTimeout(timer);
    clearTimeout(first);
    clearInterval(warner);
  }
}

function done(): 'done' {
  return 'done';
}
