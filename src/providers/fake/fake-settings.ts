/** The `fake` provider's own params (validated when the registry is built). */
export interface FakeSettings {
  /** Fixed answer text; without it the fake echoes the last user message. */
  response: string | undefined;
  latencyMs: number;
  chunkDelayMs: number;
  chunkCount: number | undefined;
  failRate: number;
  failStatus: number;
  failAfterChunks: number | undefined;
  /** `auto`: call the first offered function tool, then answer with its result (fake-tool-calls.ts). */
  toolCalls: 'auto' | 'never';
  toolArguments: Readonly<Record<string, unknown>>;
}

export const fakeParams = [
  'response',
  'latency_ms',
  'chunk_delay_ms',
  'chunk_count',
  'fail_rate',
  'fail_status',
  'fail_after_chunks',
  'tool_calls',
  'tool_arguments',
] as const;

export function validateFakeParams(params: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  const check = (key: string, ok: (value: unknown) => boolean, expected: string) => {
    if (params[key] !== undefined && !ok(params[key])) problems.push(`${key}: must be ${expected}`);
  };
  const nonNegativeInteger = (value: unknown) => Number.isInteger(value) && (value as number) >= 0;
  check('response', (value) => typeof value === 'string', 'a string');
  check('latency_ms', nonNegativeInteger, 'an integer ≥ 0');
  check('chunk_delay_ms', nonNegativeInteger, 'an integer ≥ 0');
  check('chunk_count', (value) => Number.isInteger(value) && (value as number) >= 1, 'an integer ≥ 1');
  check(
    'fail_rate',
    (value) => typeof value === 'number' && value >= 0 && value <= 1,
    'a number from 0 to 1',
  );
  check(
    'fail_status',
    (value) => Number.isInteger(value) && (value as number) >= 400 && (value as number) <= 599,
    'an HTTP error status from 400 to 599',
  );
  check('fail_after_chunks', nonNegativeInteger, 'an integer ≥ 0');
  check('tool_calls', (value) => value === 'auto' || value === 'never', '"auto" or "never"');
  check(
    'tool_arguments',
    (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
    'an object',
  );
  return problems;
}

export function readFakeSettings(params: Readonly<Record<string, unknown>>): FakeSettings {
  return {
    response: params.response as string | undefined,
    latencyMs: (params.latency_ms as number | undefined) ?? 0,
    chunkDelayMs: (params.chunk_delay_ms as number | undefined) ?? 0,
    chunkCount: params.chunk_count as number | undefined,
    failRate: (params.fail_rate as number | undefined) ?? 0,
    failStatus: (params.fail_status as number | undefined) ?? 500,
    failAfterChunks: params.fail_after_chunks as number | undefined,
    toolCalls: params.tool_calls === 'auto' ? 'auto' : 'never',
    toolArguments: (params.tool_arguments as Record<string, unknown> | undefined) ?? {},
  };
}
