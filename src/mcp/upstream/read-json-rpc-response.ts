/**
 * Reads the JSON-RPC response with a given id from an upstream answer, which Streamable HTTP allows to
 * be one JSON body or an event stream of JSON-RPC messages (notifications and requests before it are
 * skipped). Reads at most `maxBytes`, and stops reading as soon as the response arrived.
 */
import { decodeSse } from '../../lib/sse.ts';
import { UpstreamMcpError } from './upstream-mcp-error.ts';

export type JsonRpcOutcome = { ok: true; result: unknown } | { ok: false; code: number; message: string };

export async function readJsonRpcResponse(
  body: AsyncIterable<Uint8Array | string>,
  contentType: string,
  id: number,
  maxBytes: number,
): Promise<JsonRpcOutcome> {
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType === 'application/json') return fromJson(await readText(body, maxBytes), id);
  if (mediaType === 'text/event-stream') return fromEventStream(limited(body, maxBytes), id);
  // The header is upstream text: name the rule, not the value.
  throw new UpstreamMcpError('malformed', 'the answer is neither application/json nor text/event-stream');
}

async function readText(body: AsyncIterable<Uint8Array | string>, maxBytes: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const piece of limited(body, maxBytes)) {
    text += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
  }
  return text + decoder.decode();
}

async function* limited(
  body: AsyncIterable<Uint8Array | string>,
  maxBytes: number,
): AsyncGenerator<Uint8Array | string> {
  let total = 0;
  for await (const piece of body) {
    total += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.byteLength;
    if (total > maxBytes) throw new UpstreamMcpError('oversize', `the answer exceeded ${maxBytes} bytes`);
    yield piece;
  }
}

function fromJson(text: string, id: number): JsonRpcOutcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamMcpError('malformed', 'the answer is not valid JSON');
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  for (const message of messages) {
    const outcome = responseFor(message, id);
    if (outcome) return outcome;
  }
  throw new UpstreamMcpError('malformed', 'the answer holds no JSON-RPC response for the request');
}

async function fromEventStream(
  body: AsyncIterable<Uint8Array | string>,
  id: number,
): Promise<JsonRpcOutcome> {
  for await (const event of decodeSse(body)) {
    if (event.event !== undefined && event.event !== 'message') continue;
    if (event.data.trim() === '') continue; // priming events carry only an id
    let message: unknown;
    try {
      message = JSON.parse(event.data);
    } catch {
      throw new UpstreamMcpError('malformed', 'an event of the stream is not valid JSON');
    }
    const outcome = responseFor(message, id);
    if (outcome) return outcome;
  }
  throw new UpstreamMcpError('malformed', 'the event stream ended without the JSON-RPC response');
}

/** The outcome when `message` is the response to `id`; undefined for anything else (notifications …). */
function responseFor(message: unknown, id: number): JsonRpcOutcome | undefined {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    throw new UpstreamMcpError('malformed', 'a JSON-RPC message is not an object');
  }
  const record = message as Record<string, unknown>;
  if (record.id !== id || 'method' in record) return undefined;
  if (record.jsonrpc !== '2.0') throw new UpstreamMcpError('malformed', 'the response is not JSON-RPC 2.0');
  if ('result' in record) return { ok: true, result: record.result };
  const error = record.error as Record<string, unknown> | null | undefined;
  if (error && typeof error === 'object' && Number.isInteger(error.code)) {
    return { ok: false, code: error.code as number, message: String(error.message ?? '') };
  }
  throw new UpstreamMcpError('malformed', 'the response has neither a result nor a valid error');
}
