/**
 * Reads a batch input file (OpenAI's JSON-lines format) line by line from a byte stream, never holding
 * more than one line: each line must be UTF-8 without NUL bytes, a JSON object with a non-empty unique
 * string `custom_id`, `method: "POST"`, a supported `url` and an object `body` with a string `model`;
 * chat items may not stream or use MCP tools; nesting is bounded as for a synchronous request body. Blank lines are skipped (a trailing newline is usual).
 * The first problem is a 400 naming the line number (1-based) and the field.
 */
import { TextDecoder } from 'node:util';
import { errors } from '../lib/error-catalogue.ts';
import type { GatewayError } from '../lib/gateway-error.ts';
import { jsonTextTooDeep, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { findNulByte } from '../lib/nul-bytes.ts';

export const BATCH_ENDPOINTS = ['/v1/embeddings', '/v1/chat/completions'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/** OpenAI's limit of requests in one batch input file. */
export const MAX_BATCH_LINES = 50_000;

export interface BatchInputLine {
  /** 0-based index among the file's requests (blank lines not counted). */
  index: number;
  /** 1-based line number in the file, for messages. */
  lineNumber: number;
  custom_id: string;
  url: BatchEndpoint;
  body: Record<string, unknown>;
}

export interface LineLimits {
  maxLines: number;
  /** Bytes of one line (a line is one request body). */
  maxLineBytes: number;
  /** The setting that raises maxLineBytes, named in the error. */
  lineSetting: string;
}

const NEWLINE = 0x0a;

/** Yields the file's requests in order, or throws the first line's problem; text chunks are UTF-8. */
export async function* readBatchLines(
  source: AsyncIterable<Uint8Array | string>,
  limits: LineLimits,
): AsyncGenerator<BatchInputLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const seen = new Set<string>();
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineNumber = 0;
  let index = 0;
  const take = (bytes: Buffer): BatchInputLine | undefined => {
    lineNumber++;
    const line = checkLine(bytes, lineNumber, decoder, limits);
    if (line === undefined) return undefined;
    if (index >= limits.maxLines)
      throw lineError(
        lineNumber,
        null,
        `the file has more than ${limits.maxLines} requests, the limit of a batch`,
      );
    if (seen.has(line.custom_id))
      throw lineError(
        lineNumber,
        'custom_id',
        `custom_id '${line.custom_id}' is used by an earlier line; each must be unique`,
      );
    seen.add(line.custom_id);
    return { index: index++, lineNumber, ...line };
  };
  for await (const chunk of source) {
    let buffer =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let newline = buffer.indexOf(NEWLINE); newline !== -1; newline = buffer.indexOf(NEWLINE)) {
      const head = buffer.subarray(0, newline);
      const bytes = pending.length ? Buffer.concat([...pending, head]) : head;
      pending = [];
      pendingBytes = 0;
      buffer = buffer.subarray(newline + 1);
      const line = take(bytes);
      if (line) yield line;
    }
    if (buffer.length) {
      pending.push(Buffer.from(buffer));
      pendingBytes += buffer.length;
      if (pendingBytes > limits.maxLineBytes) throw tooLong(lineNumber + 1, limits);
    }
  }
  if (pendingBytes) {
    const line = take(Buffer.concat(pending));
    if (line) yield line;
  }
  if (index === 0)
    throw errors.invalidRequest('The file holds no request: send one JSON object per line.', 'file');
}

function checkLine(
  bytes: Buffer,
  lineNumber: number,
  decoder: TextDecoder,
  limits: LineLimits,
): Omit<BatchInputLine, 'index' | 'lineNumber'> | undefined {
  if (bytes.length > limits.maxLineBytes) throw tooLong(lineNumber, limits);
  if (bytes.includes(0)) throw lineError(lineNumber, null, 'the line holds a NUL byte');
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw lineError(lineNumber, null, 'the line is not valid UTF-8');
  }
  if (text.trim() === '') return undefined;
  // A body may nest as deep as a synchronous request's (the line adds one level): deeper input would
  // overflow the stack where the batch is created or an item serialized, after the upload was accepted.
  if (jsonTextTooDeep(text, MAX_JSON_DEPTH + 1))
    throw lineError(
      lineNumber,
      null,
      `the line nests arrays and objects deeper than ${MAX_JSON_DEPTH + 1} levels (a request body may nest ${MAX_JSON_DEPTH}, as a synchronous request)`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw lineError(
      lineNumber,
      null,
      `the line is not valid JSON (${(error as Error).message.slice(0, 120)})`,
    );
  }
  if (!isObject(value)) throw lineError(lineNumber, null, 'the line must be a JSON object');
  const nul = findNulByte(value);
  if (nul !== undefined) throw lineError(lineNumber, nul, 'the value holds a NUL character');
  const { custom_id: customId, method, url, body } = value;
  if (typeof customId !== 'string' || customId === '')
    throw lineError(lineNumber, 'custom_id', 'custom_id must be a non-empty string');
  if (customId.length > 512)
    throw lineError(lineNumber, 'custom_id', 'custom_id is longer than 512 characters');
  if (method !== 'POST')
    throw lineError(lineNumber, 'method', `method must be "POST", got ${JSON.stringify(method)}`);
  if (!BATCH_ENDPOINTS.includes(url as BatchEndpoint))
    throw lineError(
      lineNumber,
      'url',
      `url must be one of ${BATCH_ENDPOINTS.join(', ')}, got ${JSON.stringify(url)}`,
    );
  if (!isObject(body)) throw lineError(lineNumber, 'body', 'body must be a JSON object (the request)');
  if (typeof body.model !== 'string' || body.model === '')
    throw lineError(lineNumber, 'body.model', 'body.model must be a non-empty string');
  if (url === '/v1/chat/completions') checkChatBody(body, lineNumber);
  return { custom_id: customId, url: url as BatchEndpoint, body };
}

/** A batch item is answered as one JSON body: no streams; MCP tools would run outside the caller's sight. */
function checkChatBody(body: Record<string, unknown>, lineNumber: number): void {
  if (body.stream === true)
    throw lineError(
      lineNumber,
      'body.stream',
      'batch requests cannot stream; remove stream or set it to false',
    );
  if (Array.isArray(body.tools)) {
    const mcp = body.tools.findIndex((tool) => isObject(tool) && tool.type === 'mcp');
    if (mcp !== -1)
      throw lineError(lineNumber, `body.tools[${mcp}].type`, 'MCP tools are not supported in batch requests');
  }
}

function tooLong(lineNumber: number, limits: LineLimits): GatewayError {
  return lineError(
    lineNumber,
    null,
    `the line is longer than ${limits.maxLineBytes} bytes, the limit of one request (${limits.lineSetting})`,
  );
}

function lineError(lineNumber: number, field: string | null, problem: string): GatewayError {
  const where = field === null ? `Line ${lineNumber}` : `Line ${lineNumber}, field ${field}`;
  return errors.invalidRequest(
    `${where}: ${problem}.`,
    field === null ? `line ${lineNumber}` : `line ${lineNumber}: ${field}`,
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
