/**
 * What the fake Bedrock writes back, in the real wire formats: Converse JSON answers, ConverseStream
 * event-stream frames (encoded with the AWS codec), and AWS JSON error answers.
 */
import type { ServerResponse } from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export const FAKE_USAGE = { inputTokens: 11, outputTokens: 7, totalTokens: 18 };
export const FAKE_REQUEST_ID = 'fake-request-0001';

/** One stream event: `{type, payload}`, or an exception frame. */
export type FakeEvent = { type: string; payload: object } | { exception: string; message: string };

/** One event-stream frame, as Bedrock sends it. */
export function encodeEvent(event: FakeEvent): Uint8Array {
  if ('exception' in event) {
    return codec.encode({
      headers: {
        ':message-type': { type: 'string', value: 'exception' },
        ':exception-type': { type: 'string', value: event.exception },
        ':content-type': { type: 'string', value: 'application/json' },
      },
      body: fromUtf8(JSON.stringify({ message: event.message })),
    });
  }
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: event.type },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(JSON.stringify({ ...event.payload, p: 'abcdefgh' })),
  });
}

export function textEvents(text: string, stopReason: string): FakeEvent[] {
  return [
    { type: 'messageStart', payload: { role: 'assistant' } },
    ...text.split(/(?<=\s)/).map((word) => ({
      type: 'contentBlockDelta',
      payload: { contentBlockIndex: 0, delta: { text: word } },
    })),
    { type: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    ...stopEvents(stopReason),
  ];
}

/** A tool call with its input JSON sent in pieces of a few characters. */
export function toolEvents(id: string, name: string, input: object): FakeEvent[] {
  const json = JSON.stringify(input);
  const pieces: FakeEvent[] = [];
  for (let at = 0; at < json.length; at += 5)
    pieces.push({
      type: 'contentBlockDelta',
      payload: { contentBlockIndex: 0, delta: { toolUse: { input: json.slice(at, at + 5) } } },
    });
  return [
    { type: 'messageStart', payload: { role: 'assistant' } },
    {
      type: 'contentBlockStart',
      payload: { contentBlockIndex: 0, start: { toolUse: { toolUseId: id, name } } },
    },
    ...pieces,
    { type: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    ...stopEvents('tool_use'),
  ];
}

function stopEvents(stopReason: string): FakeEvent[] {
  return [
    { type: 'messageStop', payload: { stopReason } },
    { type: 'metadata', payload: { usage: FAKE_USAGE, metrics: { latencyMs: 42 } } },
  ];
}

export function converseAnswer(content: object[], stopReason: string): object {
  return {
    output: { message: { role: 'assistant', content } },
    stopReason,
    usage: FAKE_USAGE,
    metrics: { latencyMs: 42 },
  };
}

export function writeJson(response: ServerResponse, body: object): void {
  response
    .writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': FAKE_REQUEST_ID })
    .end(JSON.stringify(body));
}

export function startEventStream(response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amzn-requestid': FAKE_REQUEST_ID,
  });
}

const errorTypes: Readonly<Record<number, string>> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

/** An AWS JSON error: the type in `x-amzn-errortype`, the message (which may echo input) in the body. */
export function writeError(
  response: ServerResponse,
  status: number,
  message: string,
  errorType?: string,
): void {
  const type =
    errorType ??
    errorTypes[status] ??
    (status >= 500 ? 'InternalServerException' : 'UnrecognizedClientException');
  response
    .writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': FAKE_REQUEST_ID,
    })
    .end(JSON.stringify({ message }));
}
