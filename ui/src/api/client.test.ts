import { describe, expect, it, vi } from 'vitest';
import { ApiError, apiUrl, createApiClient } from './client.ts';

describe('console API client', () => {
  it('builds /ui/api URLs without empty query values (a filter left blank is not sent)', () => {
    expect(apiUrl('/keys', { team_id: 't1', user_id: '', limit: 50, cursor: undefined })).toBe(
      '/ui/api/keys?team_id=t1&limit=50',
    );
  });

  it('sends the key as a bearer header, never in the URL', async () => {
    const fetch = vi.fn(async () => new Response('{"ok":true}', { status: 200 }));
    await createApiClient('sk-secret', { fetch }).get('/session');
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).not.toContain('sk-secret');
    expect((init.headers as Record<string, string>).authorization).toBe('Bearer sk-secret');
  });

  it('turns the OpenAI error envelope into an ApiError naming the refused field', async () => {
    const body = {
      error: {
        message: 'rpm_limit must be a positive integer',
        type: 'invalid_request_error',
        param: 'rpm_limit',
        code: 'invalid_value',
      },
    };
    const fetch = vi.fn(async () => new Response(JSON.stringify(body), { status: 400 }));
    const failure = await createApiClient('k', { fetch })
      .put('/keys/x', { rpm_limit: -1 })
      .catch((error) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({
      status: 400,
      param: 'rpm_limit',
      message: 'rpm_limit must be a positive integer',
    });
  });

  it('signs out on a 401 (a revoked or rotated admin key)', async () => {
    const onUnauthorized = vi.fn();
    const fetch = vi.fn(async () => new Response('{}', { status: 401, statusText: 'Unauthorized' }));
    await expect(createApiClient('k', { fetch, onUnauthorized }).get('/keys')).rejects.toMatchObject({
      status: 401,
    });
    expect(onUnauthorized).toHaveBeenCalledOnce();
  });

  it('reports an unreachable gateway as status 0 with a next step', async () => {
    const fetch = vi.fn(async () => {
      throw new TypeError('fetch failed');
    });
    await expect(createApiClient('k', { fetch }).get('/keys')).rejects.toMatchObject({ status: 0 });
  });
});
