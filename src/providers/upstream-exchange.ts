/**
 * The transport steps every HTTP provider adapter shares: send a request with the deployment's
 * timeouts (shortened to the request deadline), read a JSON answer within a size bound, check that a
 * stream answer is one, and hold a stream to the request deadline until its first real chunk
 * (keep-alive comments and pings do not count, issue 9). Provider folders keep only their wire format.
 */
import { type AttemptContext, type DeploymentSettings, timeLeft } from './provider-adapter.ts';
import {
  FirstChunkTimeoutError,
  StreamIdleTimeoutError,
  sendUpstream,
  type UpstreamResponse,
} from './send-upstream.ts';
import { classifyTransportError, UpstreamError } from './upstream-error.ts';
import type { UpstreamPool } from './upstream-pool.ts';

/** The largest non-streaming answer read from an upstream. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface OutgoingRequest {
  path: string;
  headers: Record<string, string>;
  /** JSON text, or a streamed body (a multipart upload read from its spooled file). */
  body: string | AsyncIterable<Uint8Array>;
}

/** A well-formed answer that is not the provider's wire format (retryable: another deployment may do). */
export function protocolError(message: string, providerCode?: string): UpstreamError {
  return new UpstreamError({
    kind: 'protocol',
    retryable: true,
    message,
    ...(providerCode !== undefined ? { providerCode } : {}),
  });
}

/** Sends one request over the deployment's pool; transport failures are classified. */
export async function sendRequest(
  pool: UpstreamPool,
  settings: DeploymentSettings,
  request: OutgoingRequest,
  context: AttemptContext,
  streaming: boolean,
): Promise<UpstreamResponse> {
  const { timeouts } = settings;
  context.dispatched?.();
  try {
    return await sendUpstream({
      dispatcher: pool.dispatcher,
      path: request.path,
      headers: request.headers,
      body: request.body,
      signal: context.signal,
      poolTimeoutMs: timeouts.poolMs,
      headersTimeoutMs: timeLeft(context.deadline, streaming ? timeouts.streamIdleMs : timeouts.headersMs),
      bodyTimeoutMs: streaming ? timeouts.streamIdleMs : timeouts.totalMs,
      ...(streaming ? {} : { totalTimeoutMs: timeLeft(context.deadline, timeouts.totalMs) }),
    });
  } catch (error) {
    throw classifyTransportError(error);
  }
}

/** The answer's text and its parsed JSON; malformed JSON is a protocol error. */
export async function readJsonAnswer(response: UpstreamResponse): Promise<{ text: string; parsed: unknown }> {
  let text: string;
  try {
    text = await response.text(MAX_RESPONSE_BYTES);
  } catch (error) {
    throw classifyTransportError(error);
  }
  try {
    return { text, parsed: JSON.parse(text) };
  } catch {
    throw protocolError('the upstream answered with malformed JSON');
  }
}

/** Throws when a stream request was not answered with a stream of `contentType`. */
export function expectStream(response: UpstreamResponse, contentType: string): void {
  if (!String(response.headers['content-type'] ?? '').includes(contentType))
    throw protocolError('the upstream did not answer with an event stream');
}

/**
 * Passes `items` through, aborting the exchange if no counted item (all count unless `counts` says
 * otherwise) arrives before the request deadline, and once one has, if no further item arrives within
 * the stream timeout. Silence is measured between items, not bytes: an upstream that drips a line
 * without ever ending it, or sends only comments, keeps its socket busy but completes no item, and must
 * not hold the caller (and the caller's slot) forever. Any item counts here (a provider's ping event is
 * a complete event); the time the caller takes to read an item does not. Errors are classified.
 */
export async function* withFirstChunkDeadline<T>(
  response: UpstreamResponse,
  settings: DeploymentSettings,
  context: AttemptContext,
  items: AsyncIterable<T>,
  counts: (item: T) => boolean = () => true,
): AsyncGenerator<T> {
  const waitMs = timeLeft(context.deadline, settings.timeouts.totalMs);
  const idleMs = settings.timeouts.streamIdleMs;
  const first = setTimeout(() => response.abort(new FirstChunkTimeoutError(waitMs)), waitMs);
  let idle: NodeJS.Timeout | undefined;
  let holding = false;
  const onIdle = () => {
    if (!holding) response.abort(new StreamIdleTimeoutError(idleMs));
  };
  try {
    for await (const item of items) {
      const counted = counts(item);
      if (counted && idle === undefined) {
        clearTimeout(first);
        idle = setTimeout(onIdle, idleMs);
      }
      holding = true;
      yield item;
      holding = false;
      // Restarts the silence from now; also re-arms a timer that fired while the caller held the item.
      idle?.refresh();
    }
  } catch (error) {
    throw classifyTransportError(error);
  } finally {
    clearTimeout(first);
    clearTimeout(idle);
  }
}
