/**
 * Runs one upstream call per item with at most `limit` in flight, keeping the results in item order.
 * For providers that take one input per call (Titan embeddings) or a bounded batch (Cohere, Gemini):
 * the first failure aborts the calls still running and is the one thrown.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  run: (item: T, index: number, signal: AbortSignal) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const failed = new AbortController();
  const combined = AbortSignal.any([signal, failed.signal]);
  let next = 0;
  let firstError: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !firstError && !combined.aborted) {
      const index = next++;
      try {
        results[index] = await run(items[index]!, index, combined);
      } catch (error) {
        firstError ??= { error };
        failed.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (firstError) throw firstError.error;
  if (signal.aborted) throw signal.reason;
  return results;
}
