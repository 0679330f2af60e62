/**
 * A loopback HTTP forwarder that adds `Authorization: Bearer <key>` to every request and passes
 * everything else through unchanged (Host and Origin included). The MCP conformance suite cannot send
 * credentials, and Switchboard's /mcp requires an API key; this bridges the two for the test only.
 */
import { createServer, type Server } from 'node:http';
import { request } from 'undici';

export interface AuthForwarder {
  url: string;
  close(): Promise<void>;
}

export async function startAuthForwarder(target: string, key: string): Promise<AuthForwarder> {
  const server: Server = createServer((incoming, outgoing) => {
    const headers: Record<string, string | string[] | undefined> = {
      ...incoming.headers,
      authorization: `Bearer ${key}`,
    };
    for (const hopByHop of ['connection', 'keep-alive', 'transfer-encoding']) delete headers[hopByHop];
    request(target + (incoming.url ?? '/'), {
      method: incoming.method as 'POST',
      headers: headers as Record<string, string>,
      body: incoming.method === 'GET' || incoming.method === 'HEAD' ? null : incoming,
    }).then(
      (answer) => {
        const responseHeaders = { ...answer.headers };
        delete responseHeaders['transfer-encoding'];
        delete responseHeaders.connection;
        outgoing.writeHead(answer.statusCode, responseHeaders as Record<string, string>);
        answer.body.pipe(outgoing);
      },
      () => {
        outgoing.writeHead(502).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
