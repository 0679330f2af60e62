/** Wraps a stream iterator so the router learns when it ends, fails or is abandoned by the caller. */

export interface StreamOutcomeHooks {
  onEnd(): void;
  onError(error: unknown): void;
  onAbandon(): void;
}

export function trackStream<C>(inner: AsyncIterator<C>, hooks: StreamOutcomeHooks): AsyncIterator<C> {
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
