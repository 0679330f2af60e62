/** Wraps a stream iterator so the router learns when it ends, fails or is abandoned by the caller. */
import type { StreamChunk } from '../canonical/chat-chunk.ts';

export interface StreamOutcomeHooks {
  onEnd(): void;
  onError(error: unknown): void;
  onAbandon(): void;
}

export function trackStream(
  inner: AsyncIterator<StreamChunk>,
  hooks: StreamOutcomeHooks,
): AsyncIterator<StreamChunk> {
  let settled = false;
  const settle = (callback: () => void) => {
    if (settled) return;
    settled = true;
    callback();
  };
  return {
    async next() {
      try {
        const result = await inner.next();
        if (result.done) settle(hooks.onEnd);
        return result;
      } catch (error) {
        settle(() => hooks.onError(error));
        throw error;
      }
    },
    async return() {
      settle(hooks.onAbandon);
      await inner.return?.();
      return { done: true, value: undefined };
    },
  };
}
