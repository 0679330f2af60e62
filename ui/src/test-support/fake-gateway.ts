/**
 * A per-test fake of the gateway's /ui/api: a `fetch` that answers from a route table and records every
 * request (method, path, query, headers), so a test can assert what the console sent.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: unknown;
}

/** What a route answers: a JSON body (status 200), or a full answer with status and text or JSON. */
export type FakeAnswer = unknown | FullAnswer;
interface FullAnswer {
  status: number;
  json?: unknown;
  text?: string;
  contentType?: string;
}

export type FakeRoute = (request: RecordedRequest) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeGateway {
  fetch: typeof fetch;
  requests: RecordedRequest[];
  /** The requests made to one path (e.g. '/ui/api/spend/logs'), in order. */
  to(path: string): RecordedRequest[];
}

/** An OpenAI error envelope as the gateway answers a refused request. */
export function apiError(status: number, message: string, param: string | null = null): FakeAnswer {
  return {
    status,
    json: { error: { message, type: 'invalid_request_error', param, code: 'invalid_value' } },
  };
}

/** `routes` maps a path ('/ui/api/spend/logs', no query) to its answer; unknown paths answer 404. */
export function fakeGateway(routes: Record<string, FakeRoute>): FakeGateway {
  const requests: RecordedRequest[] = [];
  const fetchFake = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(String(input), 'http://console.test');
    const request: RecordedRequest = {
      method: init.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: { ...(init.headers as Record<string, string> | undefined) },
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    requests.push(request);
    const route = routes[url.pathname];
    if (!route) return respond(apiError(404, `No fake route for ${url.pathname}`));
    return respond(await route(request));
  };
  return {
    fetch: fetchFake as typeof fetch,
    requests,
    to: (path) => requests.filter((request) => request.path === path),
  };
}

function respond(answer: FakeAnswer): Response {
  if (isFullAnswer(answer)) {
    if (answer.text !== undefined)
      return new Response(answer.text, {
        status: answer.status,
        headers: { 'content-type': answer.contentType ?? 'text/plain' },
      });
    return new Response(JSON.stringify(answer.json ?? {}), {
      status: answer.status,
      headers: { 'content-type': 'application/json' },
    });
  }
  return new Response(JSON.stringify(answer), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
}

function isFullAnswer(answer: FakeAnswer): answer is FullAnswer {
  return (
    typeof answer === 'object' &&
    answer !== null &&
    'status' in answer &&
    typeof answer.status === 'number' &&
    ('json' in answer || 'text' in answer)
  );
}
