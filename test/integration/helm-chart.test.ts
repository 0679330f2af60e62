/**
 * The container image and the Helm chart (deploy/helm/switchboard) agree with the gateway they run:
 * values validate against the chart's schema, templates only read values that exist, probes point at
 * the gateway's health routes, the pod is non-root on a read-only root filesystem with writable paths
 * where the gateway writes, no secret value is in the chart, and the drain fits in the grace period.
 * helm-render.test.ts renders the templates with Helm's template engine and validates the objects.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../src/config/load-config.ts';
import { dropSchema } from '../support/backends.ts';
import { runCli, spawnGateway } from '../support/spawn-gateway.ts';
import { realBackendsAvailable, TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/test-env.ts';
import { uniqueName } from '../support/unique-name.ts';

const CHART = 'deploy/helm/switchboard';
const TEMPLATES = join(CHART, 'templates');
const read = (path: string) => readFileSync(path, 'utf8');
type Tree = Record<string, unknown>;

const packageJson = JSON.parse(read('package.json')) as {
  version: string;
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
};
const chart = parse(read(join(CHART, 'Chart.yaml'))) as Tree;
const values = parse(read(join(CHART, 'values.yaml'))) as Tree;
const schema = JSON.parse(read(join(CHART, 'values.schema.json'))) as object;
const templateFiles = readdirSync(TEMPLATES).filter((name) => /\.(yaml|tpl|txt)$/.test(name));
const template = (name: string) => read(join(TEMPLATES, name));
const allTemplates = templateFiles.map(template).join('\n');
const dockerfile = read('Dockerfile');

const general = (values.config as { general_settings: Tree }).general_settings;
const secretEnv = (values.secret as { env: Record<string, string> }).env;

function validateValues(candidate: unknown): string[] {
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  return validate(candidate) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

const withChange = (change: (copy: Tree) => void): Tree => {
  const copy = structuredClone(values);
  change(copy);
  return copy;
};

/** The text of a YAML block in a template: the key's line and the deeper-indented lines under it. */
function block(text: string, key: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === `${key}:`);
  if (start < 0) throw new Error(`no ${key}: block`);
  const indent = lines[start]?.search(/\S/) ?? 0;
  const end = lines.findIndex((line, i) => i > start && line.trim() !== '' && line.search(/\S/) <= indent);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

function strings(node: unknown, path = ''): Array<[string, string]> {
  if (typeof node === 'string') return [[path, node]];
  if (Array.isArray(node)) return node.flatMap((item, i) => strings(item, `${path}[${i}]`));
  if (node && typeof node === 'object')
    return Object.entries(node).flatMap(([key, item]) => strings(item, path ? `${path}.${key}` : key));
  return [];
}

/** What a leaked credential looks like: provider and master keys, URLs with passwords, long random tokens. */
const SECRET_SHAPES = [
  /\bsk-[A-Za-z0-9_-]{8,}/,
  /:\/\/[^/\s:@]*:[^/\s@]+@/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /^[A-Za-z0-9+/_=-]{32,}$/,
];

describe('Helm chart: values and schema', () => {
  it('Chart.yaml is an apiVersion v2 chart whose appVersion is the gateway version', () => {
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'switchboard', type: 'application' });
    expect(chart.appVersion).toBe(packageJson.version);
  });

  it('values.yaml validates against values.schema.json', () => {
    expect(validateValues(values)).toEqual([]);
  });

  it('the schema refuses a secret written into the configuration instead of os.environ/NAME', () => {
    const literal = withChange((copy) => {
      (copy.config as { general_settings: Tree }).general_settings.master_key = 'a-literal-master-key';
    });
    expect(validateValues(literal).join()).toMatch(/general_settings\/master_key must match pattern/);
  });

  it('the schema refuses a writable root filesystem, root, and misspelled keys', () => {
    const writable = withChange((copy) => {
      (copy.securityContext as Tree).readOnlyRootFilesystem = false;
      (copy.podSecurityContext as Tree).runAsNonRoot = false;
      copy.replicaCout = 3;
    });
    const errors = validateValues(writable).join('\n');
    expect(errors).toMatch(/securityContext\/readOnlyRootFilesystem must be equal to constant/);
    expect(errors).toMatch(/podSecurityContext\/runAsNonRoot must be equal to constant/);
    expect(errors).toMatch(/must NOT have additional properties/);
  });

  it('no value looks like a secret, and every credential of the configuration is an os.environ reference', () => {
    const leaks = strings(values).filter(([, text]) => SECRET_SHAPES.some((shape) => shape.test(text)));
    expect(leaks).toEqual([]);
    const credentialKeys = /(^|_)(key|token|password|secret|url)$/;
    const credentials = strings(values.config).filter(([path]) =>
      credentialKeys.test(path.split('.').at(-1) ?? ''),
    );
    expect(credentials.length).toBeGreaterThanOrEqual(4);
    for (const [path, text] of credentials) expect(text, path).toMatch(/^os\.environ\/[A-Za-z_]\w*$/);
  });

  it('the configuration loads in the gateway with exactly the variables the Secret provides', () => {
    const referenced = strings(values.config).flatMap(
      ([, text]) => text.match(/^os\.environ\/(\w+)$/)?.[1] ?? [],
    );
    expect(Object.keys(secretEnv).sort()).toEqual(expect.arrayContaining(referenced.sort()));
    // Values of the right shape, so the loader checks the URLs as it would in the pod.
    const sample: Record<string, string> = {
      DATABASE_URL: 'postgres://switchboard@postgres:5432/switchboard',
      REDIS_URL: 'redis://redis:6379',
    };
    const env = Object.fromEntries(
      Object.keys(secretEnv).map((name) => [name, sample[name] ?? `value-of-${name}-0123456789`]),
    );
    // The ConfigMap holds `toYaml .Values.config`.
    const config = parseConfig(stringify(values.config), {
      path: undefined,
      source: 'chart values.config',
      dataDir: '/var/lib/switchboard',
      env,
    });
    // Several replicas need the shared store and one database (docs/operations.md).
    expect(config.general_settings.redis_url).toBe(sample.REDIS_URL);
    expect(config.general_settings.database_url).toBe(sample.DATABASE_URL);
  });
});

describe('Helm chart: templates', () => {
  it('every template has balanced {{ }} delimiters and as many blocks opened as ended', () => {
    for (const name of templateFiles) {
      const text = template(name);
      const opens = (text.match(/\{\{/g) ?? []).length;
      expect((text.match(/\}\}/g) ?? []).length, name).toBe(opens);
      const blocks = (text.match(/\{\{-?\s*(if|range|with|define|block)\b/g) ?? []).length;
      expect((text.match(/\{\{-?\s*end\s*-?\}\}/g) ?? []).length, name).toBe(blocks);
    }
  });

  it('templates read only values that exist in values.yaml, and every top-level value is read', () => {
    const paths = new Set(
      [...allTemplates.matchAll(/\.Values((?:\.[A-Za-z_]\w*)+)/g)].map((m) => m[1] ?? ''),
    );
    const missing = [...paths].filter((path) => {
      let node: unknown = values;
      for (const key of path.slice(1).split('.')) {
        if (!node || typeof node !== 'object' || !(key in node)) return true;
        node = (node as Tree)[key];
      }
      return false;
    });
    expect(missing).toEqual([]);
    const topLevel = new Set([...paths].map((path) => path.split('.')[1]));
    expect(Object.keys(values).filter((key) => !topLevel.has(key))).toEqual([]);
  });

  it('probes point at the gateway health routes: readiness at /health/readiness, liveness at /health/liveliness', () => {
    const deployment = template('deployment.yaml');
    expect(block(deployment, 'readinessProbe')).toMatch(/path: \/health\/readiness\n\s+port: http/);
    expect(block(deployment, 'livenessProbe')).toMatch(/path: \/health\/liveliness\n\s+port: http/);
    expect(block(deployment, 'startupProbe')).toMatch(/path: \/health\/liveliness/);
    const routes = read('src/http/routes/health-routes.ts');
    expect(routes).toContain("'/health/readiness'");
    expect(routes).toContain("'/health/liveliness'");
  });

  it('the Service targets the container port the gateway listens on', () => {
    const deployment = template('deployment.yaml');
    expect(block(deployment, 'ports')).toMatch(
      /- name: http\n\s+containerPort: \{\{ \.Values\.containerPort \}\}/,
    );
    expect(deployment).toContain('"--port", {{ .Values.containerPort | quote }}');
    expect(template('service.yaml')).toMatch(/targetPort: http\b/);
    expect(dockerfile).toMatch(new RegExp(`^EXPOSE ${values.containerPort}$`, 'm'));
  });

  it('pods and the migration Job run non-root on a read-only root filesystem, with /tmp and the data folder writable', () => {
    expect(values.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true });
    expect(values.podSecurityContext).toMatchObject({ runAsNonRoot: true });
    const user = dockerfile.match(/^USER (\d+):(\d+)$/m);
    expect((values.podSecurityContext as Tree).runAsUser).toBe(Number(user?.[1]));
    for (const name of ['deployment.yaml', 'migration-job.yaml']) {
      const text = template(name);
      expect(text, name).toContain('{{- toYaml .Values.securityContext | nindent 12 }}');
      expect(text, name).toContain('{{- toYaml .Values.podSecurityContext | nindent 8 }}');
      // The upload spool (os.tmpdir) and GATEWAY_DATA_DIR are the only places the gateway writes.
      expect(block(text, 'volumeMounts'), name).toMatch(/mountPath: \/tmp\b/);
      expect(block(text, 'volumeMounts'), name).toMatch(/mountPath: \/var\/lib\/switchboard\b/);
    }
    expect(dockerfile).toMatch(/GATEWAY_DATA_DIR=\/var\/lib\/switchboard/);
  });

  it('credentials reach the pods only as references to a Secret', () => {
    const env = template('_helpers.tpl');
    expect(env).toMatch(
      /secretKeyRef:\n\s+name: \{\{ \$\.Values\.secret\.name \}\}\n\s+key: \{\{ \$key \}\}/,
    );
    expect(allTemplates).not.toMatch(/kind: Secret\b/);
  });

  it('the pod outlives its drain: preStop sleep, then the gateway pre-stop wait and grace period, within terminationGracePeriodSeconds', () => {
    const preStop = (values.drain as { preStopSleepSeconds: number }).preStopSleepSeconds;
    const drain =
      preStop + Number(general.shutdown_pre_stop_seconds ?? 0) + Number(general.shutdown_grace_seconds ?? 30);
    expect(values.terminationGracePeriodSeconds).toBeGreaterThan(drain + 1);
    expect(block(template('deployment.yaml'), 'preStop')).toContain(
      'command: ["sleep", {{ .Values.drain.preStopSleepSeconds | quote }}]',
    );
    expect(template('deployment.yaml')).toMatch(/^\{\{- include "switchboard\.checkDrain" \. \}\}/);
    expect(template('_helpers.tpl')).toMatch(
      /\{\{- if le \(int \.Values\.terminationGracePeriodSeconds\) \$needed \}\}\n\{\{- fail/,
    );
  });

  it('migrations run first: a pre-install,pre-upgrade hook Job runs `switchboard migrate`', () => {
    const job = template('migration-job.yaml');
    expect(job).toMatch(/kind: Job[\s\S]*"helm\.sh\/hook": pre-install,pre-upgrade/);
    expect(job).toContain('args: ["migrate"]');
    // Its pod must not carry the Deployment's selector labels, or the Service would send it traffic.
    const podLabels = block(job.slice(job.indexOf('  template:')), 'labels');
    expect(podLabels).not.toContain('switchboard.selectorLabels');
    expect(podLabels).toMatch(/app\.kubernetes\.io\/name: \{\{ include "switchboard\.name" \. \}\}-migrate/);
    expect(read('src/main.ts')).toContain("command !== 'migrate'");
  });
});

describe('Dockerfile', () => {
  const stages = [...dockerfile.matchAll(/^FROM (\S+)(?: AS (\w+))?$/gm)];
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('is multi-stage on the pinned Node version, with production dependencies only', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(new RegExp(`^ARG NODE_VERSION=${packageJson.devDependencies.node}$`, 'm'));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's own ${NODE_VERSION} argument
    for (const stage of stages) expect(stage[1]).toBe('node:${NODE_VERSION}-bookworm-slim');
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(runtime).toMatch(/COPY --from=build\b.*node_modules/);
  });

  it('runs as a numeric non-root user in the final stage', () => {
    const user = runtime.match(/^USER (\d+)(?::(\d+))?$/m);
    expect(user).not.toBeNull();
    expect(Number(user?.[1])).toBeGreaterThan(0);
  });

  it('its command is what `npm start` runs (under tini: test/integration/container-init.test.ts)', () => {
    const json = (instruction: string) =>
      JSON.parse(runtime.match(new RegExp(`^${instruction} (\\[.*\\])$`, 'm'))?.[1] ?? '[]');
    const [init, separator, ...command] = json('ENTRYPOINT');
    expect([init, separator]).toEqual(['/usr/bin/tini', '--']);
    expect([...command, ...json('CMD')].join(' ')).toBe(packageJson.scripts.start);
    expect(runtime).toMatch(/^STOPSIGNAL SIGTERM$/m);
  });

  it('checks health on /health/liveliness with node (the slim image has no curl)', () => {
    const healthcheck = runtime.match(/^HEALTHCHECK [\s\S]*?CMD (\[.*\])$/m);
    const command = JSON.parse(healthcheck?.[1] ?? '[]') as string[];
    expect(command[0]).toBe('node');
    expect(command.join(' ')).toContain('/health/liveliness');
    expect(command.join(' ')).not.toMatch(/curl|wget/);
  });

  it('holds no secret, and .dockerignore keeps local state and credentials out of the build context', () => {
    expect(dockerfile).not.toMatch(/^(ENV|ARG)\s+\S*(KEY|TOKEN|PASSWORD|SECRET|SALT)\S*=/im);
    expect(dockerfile).not.toMatch(/DATABASE_URL|REDIS_URL/);
    expect(
      strings(dockerfile.split('\n')).filter(([, line]) =>
        SECRET_SHAPES.slice(0, 4).some((s) => s.test(line)),
      ),
    ).toEqual([]);
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', '.switchboard', '.env', '.git', 'test'])
      expect(ignored).toContain(entry);
  });
});

describe.runIf(await realBackendsAvailable())(
  "the chart's pod, run as the CLI on PostgreSQL and Redis",
  () => {
    it("the Job's `migrate` then the Deployment's `serve` start on the chart configuration, get ready, and drain in time", async () => {
      const schema = uniqueName('helm');
      const folder = mkdtempSync(join(tmpdir(), 'helm-pod-'));
      // The ConfigMap's file, with a key prefix of its own so the shared Redis stays untouched.
      const config = structuredClone(values.config) as { general_settings: Tree };
      config.general_settings.redis_key_prefix = `${schema}:`;
      config.general_settings.redis_command_timeout_ms = 1000;
      writeFileSync(join(folder, 'config.yaml'), stringify(config));
      // The environment the pod template gives: the Secret's variables, the file and the data folder.
      const search = encodeURIComponent(`-c search_path=${schema}`);
      const secrets: Record<string, string> = {
        SWITCHBOARD_MASTER_KEY: `sk-master-${schema}-0123456789`,
        SWITCHBOARD_SALT_KEY: `salt-${schema}-0123456789abcdef`,
        DATABASE_URL: `${TEST_DATABASE_URL}?options=${search}`,
        REDIS_URL: TEST_REDIS_URL,
      };
      expect(Object.keys(secrets).sort()).toEqual(Object.keys(secretEnv).sort());
      const env = {
        GATEWAY_CONFIG: join(folder, 'config.yaml'),
        GATEWAY_DATA_DIR: join(folder, 'data'),
        ...secrets,
      };
      try {
        await runSql(`CREATE SCHEMA "${schema}"`);
        const job = await runCli(['migrate'], env);
        expect(job.code, job.stderr).toBe(0);
        expect(job.stdout).toContain('migrations applied');
        const pod = await spawnGateway(['--host', '0.0.0.0', '--workers', String(values.workers)], env);
        const ready = await fetch(`${pod.baseUrl}/health/readiness`);
        expect(ready.status).toBe(200);
        expect((await ready.json()) as Tree).toMatchObject({
          checks: { database: true, foreground_database: true, redis: true },
        });
        const started = performance.now();
        const code = await pod.stop('SIGTERM');
        expect(code, pod.output()).toBe(0);
        const budget =
          Number(values.terminationGracePeriodSeconds) - Number((values.drain as Tree).preStopSleepSeconds);
        expect(performance.now() - started).toBeLessThan(budget * 1000);
      } finally {
        rmSync(folder, { recursive: true, force: true });
        await dropSchema(schema);
      }
    }, 120_000);
  },
);

async function runSql(statement: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
