import { describe, expect, it } from 'vitest';
import { moduleOf, summarizeProfile } from './profile-summary.ts';

describe('moduleOf', () => {
  it('names npm packages, scoped ones included', () => {
    expect(moduleOf('file:///w/node_modules/fastify/lib/route.js', 'x')).toBe('fastify');
    expect(moduleOf('file:///w/node_modules/@fastify/ajv/index.js', 'x')).toBe('@fastify/ajv');
    expect(moduleOf('file:///w/node_modules/a/node_modules/pino/pino.js', 'x')).toBe('pino');
  });

  it('names Switchboard source folders, Node internals and V8 pseudo-frames', () => {
    expect(moduleOf('file:///work/wt/src/http/plugins/auth.ts', 'x')).toBe('src/http');
    expect(moduleOf('node:internal/streams/readable', 'x')).toBe('node:internal/streams');
    expect(moduleOf('node:http', 'x')).toBe('node:http');
    expect(moduleOf('', '(garbage collector)')).toBe('(garbage collector)');
  });
});

describe('summarizeProfile', () => {
  it('charges each sample the time until the next one, leaves idle out of the shares', () => {
    const summary = summarizeProfile({
      nodes: [
        { id: 1, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
        {
          id: 2,
          callFrame: { functionName: 'parse', url: 'file:///w/node_modules/fastify/lib/a.js', lineNumber: 9 },
        },
        { id: 3, callFrame: { functionName: '(garbage collector)', url: '', lineNumber: -1 } },
      ],
      samples: [2, 2, 1, 3, 2],
      timeDeltas: [0, 100, 300, 500, 100],
    });
    expect(summary.idleMicroseconds).toBe(500);
    expect(summary.busyMicroseconds).toBe(500);
    expect(summary.functions).toEqual([
      { name: 'parse fastify/lib/a.js:10', selfMicroseconds: 400, share: 0.8 },
      { name: '(garbage collector)', selfMicroseconds: 100, share: 0.2 },
    ]);
    expect(summary.modules.map((entry) => entry.name)).toEqual(['fastify', '(garbage collector)']);
  });
});
