/**
 * The ceiling: a pass-through proxy with no features (`node:http` in, an undici keep-alive `Pool`
 * out, bodies piped both ways). Run as a process: `bare-proxy.ts --port N --upstream URL`; prints
 * `{"port": N}` when listening.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' } },
});
const pool = new Pool(values.upstream!, { connections: 256, pipelining: 1 });
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);

const server = createServer({ keepAliveTimeout: 75_000 }, (request, response) => {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !hopByHop.has(name)) headers[name] = value;
  }
  pool
    .request({ method: request.method as 'POST', path: request.url!, headers, body: request })
    .then((upstream) => {
      const answer: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(upstream.headers)) {
        if (value !== undefined && !hopByHop.has(name)) answer[name] = value;
      }
      response.writeHead(upstream.statusCode, answer);
      upstream.body.pipe(response);
    })
    .catch(() => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
});
server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' ? address?.port : 0 })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
