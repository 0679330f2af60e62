/**
 * The Helm chart rendered as `helm template` renders it, and every rendered object valid for its
 * Kubernetes kind. helm itself does not install here (no registry ships its binary), so the chart is
 * rendered by test/support/helm-template: Go's text/template with the sprig library (Helm's engine and
 * function library, from Debian's golang-go and golang-github-masterminds-sprig-dev, which .ci/run
 * installs) plus Helm's own include/tpl/required/fail/toYaml. Objects are checked against the
 * Kubernetes OpenAPI schemas of the kubernetes-models package.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { parseConfig } from '../../src/config/load-config.ts';
import { REQUIRE_REAL_BACKENDS } from '../support/test-env.ts';

const CHART = resolve('deploy/helm/switchboard');
type Tree = Record<string, unknown>;
interface Rendered {
  status: number | null;
  stderr: string;
  documents: Tree[];
}

/** The renderer needs Go and sprig in GOPATH mode (Debian installs sources under /usr/share/gocode). */
function goAvailable(): boolean {
  return spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0;
}

const hasGo = goAvailable();
if (!hasGo && REQUIRE_REAL_BACKENDS)
  throw new Error('go is not installed: the Helm chart cannot be rendered (.ci/run installs golang-go)');

let workDir = '';
let renderer = '';

function render(values?: Tree): Rendered {
  const args = [CHART, 'sb', 'gateway'];
  if (values) {
    const file = join(workDir, `values-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, stringify(values));
    args.push(file);
  }
  const run = spawnSync(renderer, args, { encoding: 'utf8' });
  const documents =
    run.status === 0
      ? parseAllDocuments(run.stdout)
          .map((doc) => doc.toJS() as Tree | null)
          .filter((doc): doc is Tree => doc !== null)
      : [];
  return { status: run.status, stderr: run.stderr, documents };
}

/** The kubernetes-models class of each apiVersion and kind the chart renders. */
const models: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'v1 ConfigMap': ConfigMap,
  'v1 ServiceAccount': ServiceAccount,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'batch/v1 Job': Job,
};

/** Validates an object against its kind's schema (throws when invalid or of a kind not listed). */
function validateObject(object: Tree): void {
  const Model = models[`${String(object.apiVersion)} ${String(object.kind)}`];
  if (!Model) throw new Error(`no model for ${String(object.apiVersion)} ${String(object.kind)}`);
  new Model(object as never).validate();
}

const byKind = (documents: readonly Tree[], kind: string) => documents.filter((doc) => doc.kind === kind);

describe.runIf(hasGo)('Helm chart rendered with Helm’s template engine', () => {
  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), 'helm-render-'));
    renderer = join(workDir, 'helm-template');
    const build = spawnSync('go', ['build', '-o', renderer, '.'], {
      cwd: resolve('test/support/helm-template'),
      encoding: 'utf8',
      env: {
        ...process.env,
        GO111MODULE: 'off',
        GOPATH: '/usr/share/gocode',
      },
    });
    expect(build.status, build.stderr).toBe(0);
  }, 120_000);

  afterAll(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('the default values render a Deployment, Service, ConfigMap, HPA, PDB and the migration Job, each valid for its kind', () => {
    const rendered = render();
    expect(rendered.status, rendered.stderr).toBe(0);
    const kinds = Object.fromEntries(rendered.documents.map((doc) => [doc.kind, doc.apiVersion]));
    expect(kinds).toMatchObject({
      Deployment: 'apps/v1',
      Service: 'v1',
      ConfigMap: 'v1',
      HorizontalPodAutoscaler: 'autoscaling/v2',
      PodDisruptionBudget: 'policy/v1',
      Job: 'batch/v1',
    });
    for (const object of rendered.documents) validateObject(object);
  });

  it('the validator refuses an object that is not valid for its kind (the check can fail)', () => {
    const [deployment] = byKind(render().documents, 'Deployment');
    const broken = structuredClone(deployment) as { spec: { replicas: unknown } };
    broken.spec.replicas = 'two';
    expect(() => validateObject(broken as unknown as Tree)).toThrow(/replicas must be integer/);
  });

  it('the rendered ConfigMap holds a configuration the gateway loads', () => {
    const [configMap] = byKind(render().documents, 'ConfigMap') as Array<{ data: Record<string, string> }>;
    const file = configMap?.data['config.yaml'];
    expect(file).toBeDefined();
    const env = {
      SWITCHBOARD_MASTER_KEY: 'sk-master-0123456789abcdef',
      SWITCHBOARD_SALT_KEY: 'salt-0123456789abcdef',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      REDIS_URL: 'redis://127.0.0.1:6379',
    };
    const config = parseConfig(file ?? '', {
      path: undefined,
      source: 'rendered ConfigMap',
      dataDir: '/var/lib/switchboard',
      env,
    });
    expect(config.general_settings.database_url).toBe(env.DATABASE_URL);
  });

  it('the Deployment mounts the ConfigMap it renders and runs `serve` on the container port the Service targets', () => {
    const { documents } = render();
    const [deployment] = byKind(documents, 'Deployment') as Array<{
      spec: { template: { spec: { containers: Tree[]; volumes: Tree[] } } };
    }>;
    const [service] = byKind(documents, 'Service') as Array<{ spec: { ports: Tree[] } }>;
    const [configMap] = byKind(documents, 'ConfigMap') as Array<{ metadata: { name: string } }>;
    const pod = deployment?.spec.template.spec;
    const container = pod?.containers[0] as { ports: Tree[]; args?: string[] } | undefined;
    const volumeNames = (pod?.volumes ?? []).map(
      (volume) => (volume.configMap as { name?: string } | undefined)?.name,
    );
    expect(volumeNames).toContain(configMap?.metadata.name);
    const ports = (container?.ports ?? []).map((port) => port.name);
    expect(ports).toContain(service?.spec.ports[0]?.targetPort);
  });

  it('values that turn pieces off or scale them render valid objects: no HPA, no PDB, no ServiceAccount', () => {
    const rendered = render({
      autoscaling: { enabled: false },
      podDisruptionBudget: { enabled: false },
      serviceAccount: { create: false },
      replicaCount: 3,
    });
    expect(rendered.status, rendered.stderr).toBe(0);
    expect(byKind(rendered.documents, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(byKind(rendered.documents, 'PodDisruptionBudget')).toEqual([]);
    expect(byKind(rendered.documents, 'ServiceAccount')).toEqual([]);
    const [deployment] = byKind(rendered.documents, 'Deployment') as Array<{ spec: { replicas: number } }>;
    expect(deployment?.spec.replicas).toBe(3);
    for (const object of rendered.documents) validateObject(object);
  });

  it('refuses a termination grace period shorter than the drain, as helm would', () => {
    const refused = render({ terminationGracePeriodSeconds: 10 });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/terminationGracePeriodSeconds \(10\) must be above/);
  });
});
