/**
 * Before the browser suite: a Chromium to drive (Debian's package, installed with apt-get when missing;
 * CHROMIUM_PATH overrides the path), and the console built from its current sources into a folder of
 * the suite's own, which every gateway of the run serves: a `npm run build:ui` started meanwhile (it
 * empties ui/dist first) cannot pull the console from under a running flow.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The console build the suite's gateways serve at /ui. */
    consoleDistDir: string;
  }
}

const root = join(import.meta.dirname, '..', '..', '..');
const DEFAULT_CHROMIUM = '/usr/bin/chromium';

export default function setup(project: TestProject): () => void {
  ensureChromium();
  const distDir = buildConsole();
  project.provide('consoleDistDir', distDir);
  return () => rmSync(distDir, { recursive: true, force: true });
}

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM;
}

function ensureChromium(): void {
  const path = chromiumPath();
  if (existsSync(path)) return;
  if (process.env.CHROMIUM_PATH)
    throw new Error(`CHROMIUM_PATH=${path} does not exist: point it at a Chromium or Chrome binary`);
  console.log(
    '[console] /usr/bin/chromium is missing: installing Debian’s chromium with apt-get (a minute or two)',
  );
  const asRoot = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const run = (args: string[]) => {
    const [command, ...rest] = [...asRoot, ...args];
    return spawnSync(command!, rest, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      encoding: 'utf8',
    });
  };
  const update = run(['apt-get', 'update', '-qq']);
  const install = update.status === 0 ? run(['apt-get', 'install', '-y', '-qq', 'chromium']) : update;
  if (install.status !== 0 || !existsSync(DEFAULT_CHROMIUM)) {
    throw new Error(
      'The browser suite needs Chromium and could not install it ' +
        `(${(install.stderr || install.error?.message || 'apt-get failed').trim().slice(0, 500)}). ` +
        'Install it with `sudo apt-get install -y chromium`, or set CHROMIUM_PATH to a Chromium binary.',
    );
  }
  console.log('[console] chromium installed');
}

/** `npm run build:ui` into a temporary folder (Vite, about two seconds): the console as its sources are now. */
function buildConsole(): string {
  const distDir = mkdtempSync(join(tmpdir(), 'switchboard-console-'));
  console.log(`[console] building the console into ${distDir}`);
  execFileSync('npm', ['run', 'build:ui', '--silent', '--', '--outDir', distDir, '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
    // Vitest sets NODE_ENV=test, which would make this a development build of React: the suite tests
    // the production build that `npm ci` makes and the gateway ships.
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (!existsSync(join(distDir, 'index.html')))
    throw new Error(`the console build left no ${distDir}/index.html`);
  return distDir;
}
