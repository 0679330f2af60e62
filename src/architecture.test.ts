/**
 * The layering of STYLE.md, enforced: every import in src/ points to a lower layer (or stays in its own
 * folder), provider folders are reached only through the providers layer's registry, Fastify is
 * imported only by http/, and process.env is read only by main.ts and config/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname);

const layers: Record<string, number> = {
  lib: 0,
  canonical: 1,
  config: 1,
  observability: 2,
  store: 2,
  providers: 3,
  wire: 3,
  identity: 4,
  limits: 4,
  accounting: 4,
  routing: 4,
  mcp: 5,
  proxy: 6,
  batch: 7,
  http: 8,
  '.': 9,
};

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function topFolder(file: string): string {
  const parts = relative(root, file).split('/');
  return parts.length === 1 ? '.' : parts[0]!;
}

function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(
    /(?:import|export)\s[^;]*?from\s+'([^']+)'|import\s+'([^']+)'|import\('([^']+)'\)/g,
  )) {
    specifiers.push((match[1] ?? match[2] ?? match[3])!);
  }
  return specifiers;
}

const files = sourceFiles(root);

describe('architecture', () => {
  it('knows the layer of every folder in src/', () => {
    const unknown = [...new Set(files.map(topFolder))].filter((folder) => !(folder in layers));
    expect(unknown).toEqual([]);
  });

  it('imports only from lower layers or the same folder', () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = topFolder(file);
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        if (!specifier.startsWith('.')) continue;
        const to = topFolder(resolve(dirname(file), specifier));
        if (to === from) continue;
        if (layers[to]! >= layers[from]!)
          violations.push(
            `${relative(root, file)} → ${specifier} (${from} L${layers[from]} → ${to} L${layers[to]})`,
          );
      }
    }
    expect(violations).toEqual([]);
  });

  it('reaches provider folders only through the providers layer (the router never names a provider)', () => {
    const violations = files.flatMap((file) =>
      importsOf(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .filter((specifier) => {
          const target = relative(root, resolve(dirname(file), specifier));
          return /^providers\/[^/]+\//.test(target) && topFolder(file) !== 'providers';
        })
        .map((specifier) => `${relative(root, file)} → ${specifier}`),
    );
    expect(violations).toEqual([]);
  });

  it('imports fastify only in http/', () => {
    const violations = files
      .filter((file) => topFolder(file) !== 'http')
      .filter((file) =>
        importsOf(readFileSync(file, 'utf8')).some((specifier) => /^(@fastify\/|fastify)/.test(specifier)),
      )
      .map((file) => relative(root, file));
    expect(violations).toEqual([]);
  });

  it('reads process.env only in main.ts and config/', () => {
    const violations = files
      .filter((file) => !['main.ts'].includes(relative(root, file)) && topFolder(file) !== 'config')
      .filter((file) =>
        /process\.env/.test(readFileSync(file, 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '')),
      )
      .map((file) => relative(root, file));
    expect(violations).toEqual([]);
  });

  it('catches a violation when one is planted (the rules are not vacuous)', () => {
    expect(importsOf("import { x } from '../routing/router.ts';\nimport '../http/app.ts';")).toEqual([
      '../routing/router.ts',
      '../http/app.ts',
    ]);
    expect(layers.providers! < layers.routing!).toBe(true);
  });
});
