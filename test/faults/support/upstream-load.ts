/**
 * An open-loop chat load for the upstream scenarios. Like steady-load.ts it starts requests at a fixed
 * rate whatever the answers do, but it reads every answer whole, because these scenarios judge what the
 * caller received: the error code of a refusal, how a stream ended (`[DONE]`, one in-band error event,
 * or cut), which deployment answered after how many attempts, and whether any provider text leaked.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { errorCode } from './steady-load.ts';

export interface UpstreamLoadOptions {
  baseUrls: readonly string[];
  apiKey: string;
  model: string;
  ratePerSecond: number;
  /** Every n-th request streams (n = 1 / streamShare). */
  streamShare: number;
  timeoutMs: number;
  /** The user message (a hostile upstream's trigger text goes here). */
  content?: string;
  /** Text that must never reach the caller (the hostile upstream's marker). */
  leakMarker: string;
}

/** How an answer ended for the caller. */
export type Ending = 'served' | 'error' | 'in-band-error' | 'cut' | 'network' | 'timeout';

export interface Answer {
  startedAt: number;
  endedAt: number;
  stream: boolean;
  /** HTTP status (0 when none arrived). */
  status: number;
  ending: Ending;
  /** error.code of an error answer or of a stream's in-band error event. */
  code?: string;
  /** x-switchboard-deployment and x-switchboard-attempts of the answer. */
  deployment?: string;
  attempts?: number;
  /** The answer contained the provider's text. */
  leaked: boolean;
  /** The x-request-id sent (spend rows are keyed by it). */
  requestId: string;
}

export class UpstreamLoad {
  readonly answers: Answer[] = [];
  private readonly options: UpstreamLoadOptions;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private readonly loop: Promise<void>;
  private sent = 0;

  private constructor(options: UpstreamLoadOptions) {
    this.options = options;
    this.loop = this.run();
  }

  static start(options: UpstreamLoadOptions): UpstreamLoad {
    return new UpstreamLoad(options);
  }

  /** Lets the load run for `ms`, then stops it (see `stop`). */
  async stopAfter(ms: number): Promise<Answer[]> {
    await delay(ms);
    return this.stop();
  }

  /** Stops starting requests and waits for every one in flight (each bounded by `timeoutMs`). */
  async stop(): Promise<Answer[]> {
    this.stopped = true;
    await this.loop;
    await Promise.all(this.inFlight);
    return this.answers;
  }

  private async run(): Promise<void> {
    const interval = 1000 / this.options.ratePerSecond;
    const begin = performance.now();
    while (!this.stopped) {
      const request = this.send(this.sent++);
      this.inFlight.add(request);
      void request.finally(() => this.inFlight.delete(request));
      await delay(Math.max(0, begin + this.sent * interval - performance.now()));
    }
  }

  private async send(index: number): Promise<void> {
    const { baseUrls, apiKey, model, streamShare, timeoutMs, content, leakMarker } = this.options;
    const stream = index % Math.round(1 / streamShare) === 0;
    const startedAt = performance.now();
    const requestId = `upf-${process.pid}-${index}-${Math.random().toString(36).slice(2, 8)}`;
    const answer: Answer = {
      startedAt,
      endedAt: 0,
      stream,
      status: 0,
      ending: 'network',
      leaked: false,
      requestId,
    };
    try {
      const response = await fetch(`${baseUrls[index % baseUrls.length]}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          'x-request-id': requestId,
        },
        body: JSON.stringify({
          model,
          stream,
          messages: [{ role: 'user', content: content ?? `request ${index}` }],
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      answer.status = response.status;
      const deployment = response.headers.get('x-switchboard-deployment');
      const attempts = response.headers.get('x-switchboard-attempts');
      if (deployment) answer.deployment = deployment;
      if (attempts) answer.attempts = Number(attempts);
      const text = await response.text();
      answer.leaked = text.includes(leakMarker);
      Object.assign(answer, judge(response.status, stream, text));
    } catch (error) {
      answer.ending = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network';
    }
    answer.endedAt = performance.now();
    this.answers.push(answer);
  }
}

function judge(status: number, stream: boolean, text: string): Pick<Answer, 'ending' | 'code'> {
  if (status !== 200) {
    const code = errorCode(text);
    return { ending: 'error', ...(code ? { code } : {}) };
  }
  if (!stream)
    return { ending: errorCode(text) === undefined && text.includes('"choices"') ? 'served' : 'cut' };
  if (text.includes('data: [DONE]')) return { ending: 'served' };
  const errorEvent = text.split('\n').find((line) => line.startsWith('data: {"error"'));
  if (!errorEvent) return { ending: 'cut' };
  const code = errorCode(errorEvent.slice('data: '.length));
  return { ending: 'in-band-error', ...(code ? { code } : {}) };
}

/** Counts for the report: served, and everything else by status (`in-band` and `cut` for streams). */
export function tally(answers: readonly Answer[]): {
  served: number;
  errorsByStatus: Record<string, number>;
} {
  const errorsByStatus: Record<string, number> = {};
  let served = 0;
  for (const answer of answers) {
    if (answer.ending === 'served') {
      served++;
      continue;
    }
    const key =
      answer.ending === 'error'
        ? `${answer.status}${answer.code ? ` ${answer.code}` : ''}`
        : answer.ending === 'in-band-error'
          ? `in-band ${answer.code ?? ''}`.trim()
          : answer.ending;
    errorsByStatus[key] = (errorsByStatus[key] ?? 0) + 1;
  }
  return { served, errorsByStatus };
}
