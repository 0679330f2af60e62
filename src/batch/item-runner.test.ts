import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../canonical/chat-request.ts';
import { masterCaller } from '../identity/authenticator.ts';
import { GatewayError } from '../lib/gateway-error.ts';
import { type ItemPipelines, runItem } from './item-runner.ts';

const signal = new AbortController().signal;

function pipelines(overrides: Partial<ItemPipelines>): ItemPipelines {
  const never = () => Promise.reject(new Error('not expected'));
  return { text: { run: never }, modalities: { embed: never }, ...overrides };
}

describe('runItem', () => {
  it('runs a chat item non-streaming with the owner and returns the answer JSON', async () => {
    let seen: ChatRequest | undefined;
    const run = await runItem(
      pipelines({
        text: {
          run: async (request, context) => {
            seen = request;
            expect(context.caller).toBe(masterCaller);
            return {
              kind: 'json',
              response: {} as never,
              json: '{"id":"c"}',
              deploymentId: 'd',
              attempts: 1,
              headers: {},
            };
          },
        },
      }),
      '/v1/chat/completions',
      JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      masterCaller,
      'req-1',
      signal,
    );
    expect(seen?.stream).toBe(false);
    expect(run).toEqual({
      kind: 'answered',
      response: { status_code: 200, request_id: 'req-1', body: { id: 'c' } },
    });
  });

  it('turns a refusal into its status, envelope and retry-after', async () => {
    const limited = new GatewayError({
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limited',
      message: 'slow down',
      retryAfter: 3,
    });
    const run = await runItem(
      pipelines({ modalities: { embed: () => Promise.reject(limited) } }),
      '/v1/embeddings',
      JSON.stringify({ model: 'e', input: 'x' }),
      masterCaller,
      'req-2',
      signal,
    );
    expect(run).toMatchObject({
      kind: 'refused',
      status: 429,
      retryAfter: 3,
      response: { status_code: 429 },
    });
    expect(run.response.body).toEqual(limited.toBody());
  });

  it('refuses an item the decoder refuses with a 400', async () => {
    const run = await runItem(
      pipelines({}),
      '/v1/embeddings',
      '{"model":"e"}',
      masterCaller,
      'req-3',
      signal,
    );
    expect(run).toMatchObject({ kind: 'refused', status: 400 });
  });
});
