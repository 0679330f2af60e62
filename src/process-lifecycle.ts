/**
 * SIGTERM and SIGINT from the process's first instruction (issue 31). During start-up (migrations, a
 * database that does not answer yet) a signal aborts `signal`, closes what start-up opened, and exits
 * within about a second; once running, it hands over to the command's own drain. Node as PID 1 has no
 * default action for SIGTERM, so without a handler a pod stopped while starting waited for SIGKILL.
 */

/** What start-up code receives: the abort that a signal raises, and where to leave what it opened. */
export interface StartupScope {
  readonly signal: AbortSignal;
  /** `close` runs if a signal arrives before start-up completes (in reverse order of tracking). */
  track(close: () => Promise<void>): void;
}

/** The line format of the process's logger, so lines before and after it exists read the same. */
export interface LifecycleLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  flush(): void;
}

export interface ProcessLifecycleOptions {
  exit(code: number): void;
  /** Until the command's logger exists: plain lines on stderr. */
  log?: LifecycleLog;
  /** The longest a stop during start-up waits for start-up to unwind and its resources to close. */
  stopWithinMs?: number;
}

const STOP_WITHIN_MS = 800;

export class ProcessLifecycle implements StartupScope {
  private readonly options: ProcessLifecycleOptions;
  private readonly controller = new AbortController();
  private readonly closers: Array<() => Promise<void>> = [];
  private log: LifecycleLog;
  private starting: Promise<unknown> | undefined;
  private stop: ((signal: string) => void) | undefined;
  private stopping = false;
  /** Exit code of a stop during start-up: 0 for a server (nothing was lost), not 0 for `migrate`. */
  private interruptedCode = 0;

  constructor(options: ProcessLifecycleOptions) {
    this.options = options;
    this.log = options.log ?? stderrLog;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True once a signal arrived (start-up failures after it are the stop's doing, not errors). */
  get isStopping(): boolean {
    return this.stopping;
  }

  install(target: Pick<NodeJS.Process, 'on'> = process): void {
    target.on('SIGTERM', () => this.receive('SIGTERM'));
    target.on('SIGINT', () => this.receive('SIGINT'));
  }

  setLog(log: LifecycleLog): void {
    this.log = log;
  }

  /** `migrate` interrupted has not done its job: its exit code says so. */
  exitCodeWhenInterrupted(code: number): void {
    this.interruptedCode = code;
  }

  track(close: () => Promise<void>): void {
    // Opened while the stop is under way: closed at once (the exit does not wait for it).
    if (this.stopping) void close().catch(() => {});
    else this.closers.push(close);
  }

  /** Start-up work: a stop waits (boundedly) for it to unwind before the process exits. */
  start<T>(work: Promise<T>): Promise<T> {
    this.starting = work;
    return work;
  }

  /** Start-up is over: from now on a signal calls `stop` (once); what start-up tracked is its to close. */
  running(stop: (signal: string) => void): void {
    if (this.stopping) return; // the stop under way exits the process
    this.closers.length = 0;
    this.stop = stop;
  }

  private receive(signal: string): void {
    if (this.stop) {
      const stop = this.stop;
      this.stop = () => {};
      this.stopping = true;
      stop(signal);
      return;
    }
    if (this.stopping) {
      // A second signal while start-up unwinds: the operator insists.
      this.exit(this.interruptedCode);
      return;
    }
    this.stopping = true;
    this.log.info({ signal }, 'stopping during start-up: closing what was opened');
    this.controller.abort(new Error(`${signal} during start-up`));
    const closing: Promise<unknown>[] = this.closers.reverse().map((close) => close().catch(() => {}));
    if (this.starting) closing.push(this.starting.catch(() => {}));
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.options.stopWithinMs ?? STOP_WITHIN_MS);
    });
    void Promise.race([Promise.all(closing), bound]).then((outcome) => {
      clearTimeout(timer);
      if (outcome === 'late')
        this.log.warn({ signal }, 'start-up did not unwind in time; exiting with it unfinished');
      this.log.info({ signal, code: this.interruptedCode }, 'stopped during start-up');
      this.exit(this.interruptedCode);
    });
  }

  private exit(code: number): void {
    this.log.flush();
    this.options.exit(code);
  }
}

const stderrLog: LifecycleLog = {
  info: (fields, message) => process.stderr.write(`switchboard: ${message} ${JSON.stringify(fields)}\n`),
  warn: (fields, message) =>
    process.stderr.write(`switchboard: warning: ${message} ${JSON.stringify(fields)}\n`),
  flush: () => {},
};
