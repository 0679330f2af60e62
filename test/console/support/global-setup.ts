/**
 * Before the browser suite: a Chromium to drive (Debian's package, installed with apt-get when missing;
 * CHROMIUM_PATH overrides the path) and a console build in ui/dist that is not older than its sources.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..', '..');
const DEFAULT_CHROMIUM = '/usr/bin/chromium';

export default function setup(): void {
  ensureChromium();
  ensureConsoleBuild();
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

/** Builds ui/dist when it is missing or older than its sources (a page changed since the build). */
function ensureConsoleBuild(): void {
  const index = join(root, 'ui', 'dist', 'index.html');
  const builtAt = existsSync(index) ? statSync(index).mtimeMs : 0;
  const sources = [join(root, 'ui', 'index.html'), join(root, 'ui', 'vite.config.ts')].map(
    (path) => statSync(path).mtimeMs,
  );
  if (builtAt > Math.max(newestSource(join(root, 'ui', 'src')), ...sources)) return;
  console.log('[console] building the console (npm run build:ui)');
  execFileSync('npm', ['run', 'build:ui', '--silent'], { cwd: root, stdio: 'inherit' });
}

function newestSource(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    const time = entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}
