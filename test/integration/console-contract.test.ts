/**
 * The console's contract (ui/src/api/console-types.ts) against real answers: every interface's fields,
 * read from the TypeScript source, are exactly the keys the gateway sends (an optional field may be
 * absent), for the session, overview and deployments endpoints. A field renamed or added on one side
 * only fails here rather than in a browser.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAiServer } from '../fakes/fake-openai-server.ts';
import { type Backend, sqliteBackend } from '../support/backends.ts';
import { startTestGateway, type TestGateway } from '../support/start-gateway.ts';

type Fields = Map<string, { optional: boolean }>;

/**
 * Interface name → its fields, and inline object types by `Interface.field` (e.g. `Rejections.series`),
 * read from the source text (interfaces of plain fields, as console-types.ts is written).
 */
function contractFields(): Map<string, Fields> {
  const path = new URL('../../ui/src/api/console-types.ts', import.meta.url);
  const text = readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  const found = new Map<string, Fields>();
  for (const match of text.matchAll(/interface (\w+)[^{]*\{/g))
    collect(match[1]!, bodyAt(text, match.index! + match[0].length), found);
  return found;
}

/** The text up to the brace closing the one just before `start`. */
function bodyAt(text: string, start: number): string {
  let depth = 1;
  for (let index = start; index < text.length; index++) {
    if (text[index] === '{') depth++;
    if (text[index] === '}' && --depth === 0) return text.slice(start, index);
  }
  throw new Error('unbalanced braces in console-types.ts');
}

function collect(name: string, body: string, found: Map<string, Fields>): void {
  const fields: Fields = new Map();
  let depth = 0;
  let member = '';
  for (const char of `${body};`) {
    if (char === '{' || char === '<' || char === '(') depth++;
    if (char === '}' || char === '>' || char === ')') depth--;
    if ((char === ';' || char === ',') && depth === 0) {
      const parsed = /^\s*(\w+)(\?)?\s*:\s*([\s\S]*)$/.exec(member);
      if (parsed) {
        fields.set(parsed[1]!, { optional: parsed[2] === '?' });
        const inline = parsed[3]!.indexOf('{');
        if (inline >= 0) collect(`${name}.${parsed[1]}`, bodyAt(parsed[3]!, inline + 1), found);
      }
      member = '';
    } else member += char;
  }
  found.set(name, fields);
}

describe('the console contract against real answers', () => {
  const contract = contractFields();
  let backend: Backend;
  let upstream: FakeOpenAiServer;
  let gateway: TestGateway;

  function expectShape(value: Record<string, unknown>, name: string): void {
    const fields = contract.get(name);
    expect(fields, `interface ${name}`).toBeDefined();
    const required = [...fields!].filter(([, field]) => !field.optional).map(([key]) => key);
    for (const key of required) expect(Object.keys(value), `${name}.${key}`).toContain(key);
    for (const key of Object.keys(value)) expect([...fields!.keys()], `${name} has no ${key}`).toContain(key);
  }

  beforeAll(async () => {
    upstream = await FakeOpenAiServer.start();
    backend = sqliteBackend();
    gateway = await startTestGateway({
      backend,
      yaml: `model_list:\n  - { model_name: demo, params: { provider: openai, model: upstream, api_base: "${upstream.baseUrl}" }, model_info: { id: demo-1 } }\nrouter_settings:\n  fallbacks: [{ demo: [demo] }]\n`,
    });
    const key = await gateway.createKey({ key_name: 'contract' });
    await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  it('reads the contract, inline object types included', () => {
    expect([...contract.get('Rejections.series')!.keys()]).toEqual(['start', 'rate_limit', 'budget']);
    expect(contract.get('OverviewAnswer')!.get('organization_id')).toEqual({ optional: true });
    expect(contract.get('DeploymentsAnswer.topology')!.size).toBe(8);
  });

  it('GET /ui/api/session is a SessionAnswer', async () => {
    expectShape((await gateway.admin('GET', '/ui/api/session')).body, 'SessionAnswer');
  });

  it('GET /ui/api/console/overview is an OverviewAnswer, nested shapes included', async () => {
    // The spend row lands just after the answer; the overview caches its figures, so wait for the row first.
    await expect
      .poll(async () => (await gateway.admin('GET', '/ui/api/spend/logs')).body.data.length)
      .toBe(1);
    const body = (await gateway.admin('GET', '/ui/api/console/overview')).body;
    expect(body.totals.requests).toBe(1);
    expectShape(body, 'OverviewAnswer');
    expectShape(body.totals, 'OverviewTotals');
    expectShape(body.series[0], 'OverviewBucket');
    expectShape(body.top_models[0], 'TopModel');
    expectShape(body.top_keys[0], 'TopKey');
    expectShape(body.rejections, 'Rejections');
    expectShape(body.rejections.series[0], 'Rejections.series');
  });

  it('GET /ui/api/console/deployments is a DeploymentsAnswer, nested shapes included', async () => {
    const body = (await gateway.admin('GET', '/ui/api/console/deployments')).body;
    expectShape(body, 'DeploymentsAnswer');
    expectShape(body.counts, 'DeploymentsAnswer.counts');
    expectShape(body.topology, 'DeploymentsAnswer.topology');
    expectShape(body.model_groups[0], 'ModelGroupView');
    expectShape(body.model_groups[0].deployments[0], 'DeploymentView');
    expectShape(body.model_groups[0].deployments[0].minute_usage, 'DeploymentView.minute_usage');
  });
});
