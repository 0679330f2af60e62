/**
 * The image's PID 1 and the chart's use of it (issue 31): the gateway runs under tini from Debian's
 * packages, which forwards SIGTERM and SIGINT and reaps children, and neither the Deployment nor the
 * migration Job replaces the image's entrypoint (a `command:` there would put node back as PID 1). The
 * gateway's own handling of a stop during start-up is proven on a real process in
 * test/e2e/startup-signals.test.ts; Docker cannot run here, so this reads the files.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const dockerfile = readFileSync('Dockerfile', 'utf8');
const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const template = (name: string) => readFileSync(`deploy/helm/switchboard/templates/${name}`, 'utf8');

/** `command:` lines that are not an exec hook's (a container-level command overrides the entrypoint). */
function containerCommands(text: string): string[] {
  const lines = text.split('\n');
  return lines.filter((line, index) => {
    if (!/^\s*command:/.test(line)) return false;
    const previous = lines
      .slice(0, index)
      .reverse()
      .find((candidate) => candidate.trim() !== '');
    return previous?.trim() !== 'exec:';
  });
}

describe('the container init', () => {
  it('installs tini from the Debian packages in the runtime stage and runs the gateway under it', () => {
    expect(runtime).toMatch(/apt-get install -y --no-install-recommends tini=\S+/);
    expect(runtime).toMatch(/rm -rf \/var\/lib\/apt\/lists\/\*/);
    const entrypoint = JSON.parse(runtime.match(/^ENTRYPOINT (\[.*\])$/m)?.[1] ?? '[]') as string[];
    expect(entrypoint.slice(0, 3)).toEqual(['/usr/bin/tini', '--', 'node']);
    expect(runtime).toMatch(/^STOPSIGNAL SIGTERM$/m);
  });

  it('the Deployment and the migration Job pass args only, keeping the image entrypoint (tini)', () => {
    for (const name of ['deployment.yaml', 'migration-job.yaml']) {
      const text = template(name);
      expect(containerCommands(text), name).toEqual([]);
      expect(text, name).toMatch(/^\s+args: \[/m);
    }
  });

  it('the migration Job fails instead of retrying forever, and is bounded in time (a stop exits it non-zero)', () => {
    const job = template('migration-job.yaml');
    expect(job).toMatch(/^\s+restartPolicy: Never$/m);
    expect(job).toMatch(/^\s+backoffLimit: \{\{ \.Values\.migrations\.backoffLimit \}\}$/m);
    expect(job).toMatch(/^\s+activeDeadlineSeconds: \{\{ \.Values\.migrations\.activeDeadlineSeconds \}\}$/m);
    const values = parse(readFileSync('deploy/helm/switchboard/values.yaml', 'utf8')) as {
      migrations: { activeDeadlineSeconds: number; backoffLimit: number };
    };
    expect(values.migrations.activeDeadlineSeconds).toBeGreaterThan(0);
    expect(values.migrations.backoffLimit).toBeGreaterThanOrEqual(0);
  });
});
