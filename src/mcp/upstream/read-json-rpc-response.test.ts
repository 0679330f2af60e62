import { describe, expect, it } from 'vitest';
import { readJsonRpcResponse } from './read-json-rpc-response.ts';

async function* pieces(...parts: string[]) {
  for (const part of parts) yield new TextEncoder().encode(part);
}

describe('reading an upstream JSON-RPC response', () => {
  it('reads a JSON body', async () => {
    const outcome = await readJsonRpcResponse(
      pieces('{"jsonrpc":"2.0","id":7,', '"result":{"ok":true}}'),
      'application/json; charset=utf-8',
      7,
      1000,
    );
    expect(outcome).toEqual({ ok: true, result: { ok: true } });
  });

  it('takes the response whose id matches from an event stream, skipping notifications and priming events', async () => {
    const stream = [
      'id: 1\ndata: \n\n',
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n',
      'event: message\ndata: {"jsonrpc":"2.0","id":3,"result":{"other":true}}\n\n',
      'event: message\ndata: {"jsonrpc":"2.0","id":4,"result":{"mine":true}}\n\n',
    ];
    const outcome = await readJsonRpcResponse(
      pieces(...stream.join('').match(/.{1,7}/gs)!),
      'text/event-stream',
      4,
      10_000,
    );
    expect(outcome).toEqual({ ok: true, result: { mine: true } });
  });

  it('returns the code and message of a JSON-RPC error', async () => {
    const outcome = await readJsonRpcResponse(
      pieces('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}'),
      'application/json',
      1,
      1000,
    );
    expect(outcome).toEqual({ ok: false, code: -32602, message: 'bad' });
  });

  it.each([
    ['non-JSON', 'application/json', 'Internal Server Error', 'malformed'],
    ['HTML', 'text/html', '<html></html>', 'malformed'],
    ['a response to another id', 'application/json', '{"jsonrpc":"2.0","id":2,"result":{}}', 'malformed'],
    ['a response without result or error', 'application/json', '{"jsonrpc":"2.0","id":1}', 'malformed'],
    [
      'a stream that ends early',
      'text/event-stream',
      'data: {"jsonrpc":"2.0","method":"x"}\n\n',
      'malformed',
    ],
    [
      'an oversize answer',
      'application/json',
      `{"jsonrpc":"2.0","id":1,"result":"${'x'.repeat(2000)}"}`,
      'oversize',
    ],
  ])('rejects %s', async (_name, contentType, body, kind) => {
    await expect(readJsonRpcResponse(pieces(body), contentType, 1, 1000)).rejects.toMatchObject({ kind });
  });
});
