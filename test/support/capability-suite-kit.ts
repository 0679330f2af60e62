/**
 * What the capability conformance suites (embeddings, speech, transcription) share: one adapter of the
 * case against its fake upstream for a whole describe block (and more with other timeouts), a fake
 * server seen through a suite's scenario vocabulary, and the rule that error statuses are classified
 * from the status and Retry-After alone, never keeping the provider's body.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type {
  DeploymentSettings,
  ProviderAdapter,
  ProviderFactory,
} from '../../src/providers/provider-adapter.ts';
import type { UpstreamError } from '../../src/providers/upstream-error.ts';
import { settingsFor } from './provider-adapter-suite.ts';

/** A fake upstream as a suite drives it: its calls (with whether the caller left), scenarios, reset. */
export interface SuiteUpstream<Scenario, Seen extends { aborted: boolean } = { aborted: boolean }> {
  readonly origin: string;
  readonly requests: ReadonlyArray<Seen>;
  enqueue(scenario: Scenario): void;
  reset(): void;
  close(): Promise<void>;
}

/** A fake server whose scenarios `enqueue` translates from the suite's. */
export function suiteUpstream<Scenario, Seen extends { aborted: boolean }>(
  server: { readonly origin: string; readonly requests: Seen[]; reset(): void; close(): Promise<void> },
  enqueue: (scenario: Scenario) => void,
): SuiteUpstream<Scenario, Seen> {
  return {
    get origin() {
      return server.origin;
    },
    requests: server.requests,
    enqueue,
    reset: () => server.reset(),
    close: () => server.close(),
  };
}

export interface CapabilityCase<Upstream> {
  factory: ProviderFactory;
  startUpstream(): Promise<Upstream>;
  params(origin: string): Record<string, unknown>;
}

export interface CapabilityUnderTest<Upstream, Capability> {
  readonly upstream: Upstream;
  readonly capability: Capability;
  /** Another adapter of the case with other timeouts (the caller closes it). */
  make(overrides: Partial<DeploymentSettings['timeouts']>): {
    capability: Capability;
    close(): Promise<void>;
  };
}

/**
 * Starts the case's upstream and adapter before the describe block's tests and closes them after,
 * resets the upstream before each test, and checks that the factory accepts the case's params.
 */
export function capabilityUnderTest<Upstream extends SuiteUpstream<never>, Capability>(
  adapterCase: CapabilityCase<Upstream>,
  name: string,
  capabilityOf: (adapter: ProviderAdapter) => Capability | undefined,
): CapabilityUnderTest<Upstream, Capability> {
  let upstream: Upstream | undefined;
  let main: { capability: Capability; close(): Promise<void> } | undefined;
  const make = (overrides: Partial<DeploymentSettings['timeouts']> = {}) => {
    const adapter = adapterCase.factory.create(settingsFor(adapterCase.params(upstream!.origin), overrides));
    const capability = capabilityOf(adapter);
    if (!capability) throw new Error(`the adapter declares no ${name} capability`);
    return { capability, close: () => adapter.close() };
  };
  beforeAll(async () => {
    upstream = await adapterCase.startUpstream();
    main = make();
  });
  afterAll(async () => {
    await main?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream!.reset());
  it('accepts its own params', () => {
    expect(adapterCase.factory.validate(adapterCase.params('http://127.0.0.1:1'))).toEqual([]);
  });
  return {
    get upstream() {
      return upstream!;
    },
    get capability() {
      return main!.capability;
    },
    make,
  };
}

/** An error answer of the fake: the status, with a Retry-After when given. */
export interface ErrorScenario {
  kind: 'error';
  status: number;
  retryAfterSeconds?: number;
}

export interface StatusRule {
  /** Queues an error answer on the fake. */
  enqueue(scenario: ErrorScenario): void;
  /** One call of the capability, expected to fail with an UpstreamError. */
  fail(): Promise<UpstreamError>;
  /** A marker every error body of the fake carries. */
  secret: string;
  /** Whether the fake's 429 carries a Retry-After the adapter reads. */
  sendsRetryAfter: boolean;
}

/** 5xx and 429 are retryable, 400 and 401 are not; a 429's hint is read; the body is never kept. */
export function itClassifiesErrorStatuses(rule: () => StatusRule): void {
  it('classifies 5xx and 429 as retryable and 400, 401 as not, never keeping the body', async () => {
    const { enqueue, fail, secret } = rule();
    for (const status of [500, 503, 429, 400, 401]) {
      enqueue({ kind: 'error', status });
      const error = await fail();
      expect(error, String(status)).toMatchObject({
        kind: 'status',
        status,
        retryable: status >= 500 || status === 429,
      });
      expect(JSON.stringify({ ...error, message: error.message })).not.toContain(secret);
    }
  });

  it("reads a 429's retry hint", async () => {
    const { enqueue, fail, sendsRetryAfter } = rule();
    enqueue({ kind: 'error', status: 429, retryAfterSeconds: 7 });
    const error = await fail();
    if (sendsRetryAfter) expect(error.retryAfterMs).toBe(7_000);
    else expect(error.retryable).toBe(true);
  });
}
