/**
 * Issue 18's secret scanner: while a test gateway runs, every response (status line headers, body
 * chunks, streamed or not), every log line and the final /metrics text are searched for the secrets
 * the gateway holds (master key, minted API keys, provider keys of its configuration, MCP server
 * tokens, the hashing salt). A secret seen anywhere fails the test when the gateway is closed, with
 * the offending text redacted. The one allowed place is the answer that mints a key: the spec shows
 * the new secret there, once.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Shorter values are not treated as secrets: they would match ordinary text (a test's `api_key: x`). */
const MIN_SECRET_LENGTH = 8;
/** The answers that show a newly minted key (spec: once, in the creation answer). */
const KEY_CREATION_ROUTES = new Set(['POST /ui/api/keys', 'POST /key/generate']);
/** Config and body fields whose string values are credentials. */
const SECRET_FIELD =
  /(^|_)(api_key|master_key|salt_key|token|secret|secret_access_key|password|credentials?)$/i;
const SECRET_HEADER = /^(authorization|x-api-key|api-key|proxy-authorization|cookie)$/i;

export interface SecretFinding {
  kind: string;
  where: string;
  /** The text around the secret, with every secret replaced by its kind. */
  excerpt: string;
}

export class SecretScanner {
  private readonly secrets = new Map<string, string>();
  private readonly findings: SecretFinding[] = [];
  private longest = 0;

  /** Registers a secret (ignored when not a string or too short to be told apart from ordinary text). */
  add(value: unknown, kind: string): void {
    if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || this.secrets.has(value)) return;
    this.secrets.set(value, kind);
    this.longest = Math.max(this.longest, value.length);
  }

  /** Registers every credential-named string field under `value` (config, an admin body). */
  addFrom(value: unknown, kind: string, field = ''): void {
    if (typeof value === 'string') {
      if (SECRET_FIELD.test(field) || SECRET_HEADER.test(field)) this.add(value, `${kind} ${field}`);
      return;
    }
    if (Array.isArray(value)) for (const item of value) this.addFrom(item, kind, field);
    else if (value !== null && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) this.addFrom(item, kind, key);
  }

  /** Records a finding for each secret in `text` except `allowed`. */
  scan(text: string, where: string, allowed?: string): void {
    if (text.length === 0) return;
    for (const [secret, kind] of this.secrets) {
      if (secret === allowed) continue;
      const at = text.indexOf(secret);
      if (at === -1) continue;
      const excerpt = text.slice(Math.max(0, at - 120), at + secret.length + 120);
      if (this.findings.length < 20) this.findings.push({ kind, where, excerpt: this.redact(excerpt) });
    }
  }

  /** The text with every known secret replaced by `[kind]`. */
  redact(text: string): string {
    let out = text;
    for (const [secret, kind] of this.secrets) out = out.split(secret).join(`[${kind}]`);
    return out;
  }

  seen(): readonly SecretFinding[] {
    return this.findings;
  }

  /** Throws naming each place a secret was seen (redacted), if any. */
  assertClean(): void {
    if (this.findings.length === 0) return;
    const lines = this.findings.map((f) => `- ${f.kind} in ${this.redact(f.where)}: …${f.excerpt}…`);
    throw new Error(`secret scanner: a secret appeared where it must not\n${lines.join('\n')}`);
  }

  /** A pino destination that scans each log line and passes it on to `next`, if given. */
  logDestination(next?: NodeJS.WritableStream): Writable {
    return new Writable({
      write: (chunk: Buffer | string, _encoding, callback) => {
        const line = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
        this.scan(line, 'a log line');
        if (next) next.write(line);
        callback();
      },
    });
  }

  /**
   * Scans every answer of `app` (call before it is ready): headers as written and body chunks as they
   * leave, streamed or not, with a tail kept across chunks so a secret split between two is still seen.
   */
  watch(app: FastifyInstance): void {
    app.addHook('onRequest', async (request, reply) => {
      this.watchReply(request, reply);
    });
    // Bodies that define MCP servers hold their bearer tokens: register them before the answer is scanned.
    app.addHook('preHandler', async (request) => {
      const route = request.routeOptions.url ?? '';
      if (route.startsWith('/ui/api/mcp-servers')) this.addFrom(request.body, 'MCP server');
    });
  }

  private watchReply(request: FastifyRequest, reply: FastifyReply): void {
    const raw = reply.raw;
    const route = `${request.method} ${request.routeOptions.url ?? ''}`;
    const where = `the answer to ${request.method} ${request.url.split('?')[0]!.slice(0, 120)}`;
    const creation = KEY_CREATION_ROUTES.has(route);
    let tail = '';
    let kept = '';
    const take = (chunk: unknown) => {
      const text = chunkText(chunk);
      if (text === undefined) return;
      if (creation) {
        kept += text;
        return;
      }
      const window = tail + text;
      this.scan(window, where);
      tail = window.slice(-Math.max(0, this.longest - 1));
    };
    const writeHead = raw.writeHead;
    const write = raw.write;
    const end = raw.end;
    raw.writeHead = function (this: typeof raw, ...args: unknown[]) {
      scanner.scan(JSON.stringify(args.slice(1)), `the headers of ${where}`);
      return (writeHead as (...a: unknown[]) => typeof raw).apply(this, args);
    } as typeof raw.writeHead;
    raw.write = function (this: typeof raw, chunk: unknown, ...rest: unknown[]) {
      take(chunk);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof raw.write;
    raw.end = function (this: typeof raw, chunk?: unknown, ...rest: unknown[]) {
      take(chunk);
      scanner.scan(JSON.stringify(raw.getHeaders()), `the headers of ${where}`);
      if (creation) scanner.scanCreation(kept, where, raw.statusCode);
      return (end as (...a: unknown[]) => typeof raw).call(this, chunk, ...rest);
    } as typeof raw.end;
    const scanner = this;
  }

  /** A key-creation answer: its own new key is allowed (and registered from now on), nothing else is. */
  private scanCreation(text: string, where: string, status: number): void {
    let minted: string | undefined;
    if (status >= 200 && status < 300) {
      try {
        const key = (JSON.parse(text) as { key?: unknown }).key;
        if (typeof key === 'string') minted = key;
      } catch {
        // Not JSON: scanned like any answer.
      }
    }
    this.scan(text, where, minted);
    this.add(minted, 'minted API key');
  }
}

function chunkText(chunk: unknown): string | undefined {
  if (typeof chunk === 'string') return chunk;
  // latin1 keeps each byte one character: ASCII secrets are found even in a multi-byte split.
  if (chunk instanceof Uint8Array)
    return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
  return undefined;
}
