/**
 * The console's only way to the gateway: JSON over /ui/api with the signed-in admin key as a bearer
 * token. Errors arrive in the OpenAI envelope and become ApiError, whose `param` names the field a
 * form should mark.
 */

export class ApiError extends Error {
  readonly status: number;
  readonly type: string | null;
  readonly code: string | null;
  /** The request field the gateway refused (e.g. `rpm_limit`), when it named one. */
  readonly param: string | null;

  constructor(
    status: number,
    message: string,
    details: { type?: unknown; code?: unknown; param?: unknown } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = typeof details.type === 'string' ? details.type : null;
    this.code = typeof details.code === 'string' ? details.code : null;
    this.param = typeof details.param === 'string' ? details.param : null;
  }
}

export type QueryValue = string | number | boolean | undefined | null;

export interface ApiClient {
  get<T>(path: string, query?: Record<string, QueryValue>): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body?: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
  /** A text answer (CSV export), fetched with the same credentials. */
  text(path: string, query?: Record<string, QueryValue>): Promise<string>;
}

/** Builds `/ui/api<path>?query`, leaving out empty values. */
export function apiUrl(path: string, query: Record<string, QueryValue> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(name, String(value));
  }
  const suffix = search.size > 0 ? `?${search}` : '';
  return `/ui/api${path}${suffix}`;
}

export function createApiClient(
  key: string,
  options: { fetch?: typeof fetch; onUnauthorized?: () => void } = {},
): ApiClient {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const send = async (method: string, url: string, body?: unknown): Promise<Response> => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await doFetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      throw new ApiError(0, 'The gateway could not be reached. Check that it is running and try again.');
    }
    if (response.status === 401) options.onUnauthorized?.();
    if (!response.ok) throw await errorOf(response);
    return response;
  };
  const json = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
    const response = await send(method, url, body);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  return {
    get: (path, query) => json('GET', apiUrl(path, query)),
    post: (path, body) => json('POST', apiUrl(path), body ?? {}),
    put: (path, body) => json('PUT', apiUrl(path), body ?? {}),
    patch: (path, body) => json('PATCH', apiUrl(path), body ?? {}),
    delete: (path) => json('DELETE', apiUrl(path)),
    text: async (path, query) => (await send('GET', apiUrl(path, query))).text(),
  };
}

async function errorOf(response: Response): Promise<ApiError> {
  let envelope: unknown;
  try {
    envelope = await response.json();
  } catch {
    envelope = undefined;
  }
  const error =
    typeof envelope === 'object' && envelope !== null && 'error' in envelope
      ? (envelope as { error: Record<string, unknown> }).error
      : undefined;
  const message =
    error && typeof error.message === 'string' && error.message !== ''
      ? error.message
      : `The gateway answered ${response.status} ${response.statusText}.`;
  return new ApiError(response.status, message, error ?? {});
}
