import { describe, expect, it } from 'vitest';
import {
  forbiddenAddress,
  guardedLookup,
  OPEN_POLICY,
  redactUrl,
  upstreamUrlProblem,
} from './upstream-url-policy.ts';

describe('the upstream URL policy (issue 9: upstream URLs are a request-forgery surface)', () => {
  it.each([
    'http://169.254.169.254/latest/meta-data',
    'http://[fe80::1]/mcp',
    'http://[::ffff:169.254.169.254]/',
    'http://[fd00:ec2::254]/',
    'http://metadata.google.internal/computeMetadata/v1',
    'http://METADATA.google.internal./x',
    'http://0.0.0.0:4000/',
    'http://100.100.100.200/',
  ])('refuses the link-local or metadata address %s', (url) => {
    expect(upstreamUrlProblem(url, OPEN_POLICY)).toMatch(/link-local or cloud-metadata/);
  });

  it.each([
    'http://127.0.0.1:11434',
    'http://localhost:8080/mcp',
    'http://10.0.0.5/v1',
    'http://192.168.1.20:8000/v1',
    'https://api.openai.com/v1',
  ])('allows loopback, private and public hosts by default: %s', (url) => {
    expect(upstreamUrlProblem(url, OPEN_POLICY)).toBeUndefined();
  });

  it('refuses credentials inside the URL, pointing at the token fields', () => {
    expect(upstreamUrlProblem('http://user:pw@host/mcp', OPEN_POLICY)).toMatch(/auth_config/);
    expect(upstreamUrlProblem('http://user@host/mcp', OPEN_POLICY)).toMatch(/credentials/);
  });

  it('refuses other schemes and relative URLs', () => {
    expect(upstreamUrlProblem('file:///etc/passwd', OPEN_POLICY)).toMatch(/http/);
    expect(upstreamUrlProblem('/v1', OPEN_POLICY)).toMatch(/absolute/);
  });

  it('with an allow-list, accepts only the listed hosts and subdomains of *.patterns', () => {
    const policy = { allowedHosts: ['api.openai.com', '*.internal.example'] };
    expect(upstreamUrlProblem('https://api.openai.com/v1', policy)).toBeUndefined();
    expect(upstreamUrlProblem('http://tools.internal.example/mcp', policy)).toBeUndefined();
    expect(upstreamUrlProblem('http://internal.example.evil.com/mcp', policy)).toMatch(
      /upstream_allowed_hosts/,
    );
    expect(upstreamUrlProblem('http://127.0.0.1/mcp', policy)).toMatch(/upstream_allowed_hosts/);
  });

  it('redacts every query value and leaves URLs without a query alone', () => {
    expect(redactUrl('http://host/mcp?token=abc&x=1')).toBe('http://host/mcp?token=REDACTED&x=REDACTED');
    expect(redactUrl('http://host/mcp')).toBe('http://host/mcp');
  });

  it('tells forbidden addresses apart from loopback and private ones', () => {
    expect(forbiddenAddress('169.254.0.1')).toBe(true);
    expect(forbiddenAddress('127.0.0.1')).toBe(false);
    expect(forbiddenAddress('::1')).toBe(false);
    expect(forbiddenAddress('not-an-ip')).toBe(false);
  });

  it('resolves names at connect time and refuses those that point only at forbidden addresses', async () => {
    const resolved = await new Promise<string>((resolve, reject) =>
      guardedLookup('localhost', { family: 4 }, (error, address) =>
        error ? reject(error) : resolve(String(address)),
      ),
    );
    expect(resolved).toBe('127.0.0.1');
    // An IP literal goes through the same lookup: a metadata literal is refused at connect time too.
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup('169.254.169.254', {}, (error) => resolve(error)),
    );
    expect(refused?.code).toBe('EUPSTREAMFORBIDDEN');
  });
});
