/**
 * A small but lived-in gateway for the console's tour and its documentation screenshots: two
 * organizations with teams, users and keys, a day of chat traffic spread over the hours (with failures,
 * a fallback, rate-limit and budget refusals), and an MCP server with a pending approval.
 */
import OpenAI from 'openai';
import type { FakeMcpServer } from '../../fakes/mcp/fake-mcp-server.ts';
import {
  adminOk,
  bind,
  connectClient,
  createKey,
  registerServer,
  setPolicy,
} from '../../support/mcp-fixtures.ts';
import type { TestGateway } from '../../support/start-gateway.ts';
import type { ShiftedClock } from './shifted-clock.ts';

const PRICES = 'input_cost_per_token: 0.0000025, output_cost_per_token: 0.00001';

/** Three chat groups (one slow, one with two deployments), a failing group that falls back, one that only fails. */
export const tourModels = `
model_list:
  - model_name: gpt-4o-mini
    params: { provider: fake, model: gpt-4o-mini, latency_ms: 30 }
    model_info: { id: mini-eu, ${PRICES} }
  - model_name: claude-sonnet
    params: { provider: fake, model: claude-sonnet, latency_ms: 90 }
    model_info: { id: sonnet-a, ${PRICES} }
  - model_name: claude-sonnet
    params: { provider: fake, model: claude-sonnet, latency_ms: 140 }
    model_info: { id: sonnet-b, ${PRICES} }
  - model_name: llama-edge
    params: { provider: fake, model: llama-edge, fail_rate: 1, fail_status: 500 }
    model_info: { id: edge-box }
  - model_name: legacy-davinci
    params: { provider: fake, model: legacy-davinci, fail_rate: 1, fail_status: 503 }
    model_info: { id: davinci-onprem }
router_settings:
  num_retries: 0
  allowed_fails: 1
  cooldown_time: 600
  fallbacks: [{ llama-edge: [gpt-4o-mini] }]
`;

export interface SeededWorld {
  /** The call waiting in the approval inbox (the text of its arguments). */
  pendingApproval: { text: string };
  close(): Promise<void>;
}

interface SeededKey {
  key: string;
  keyId: string;
  model: string;
  weight: number;
}

export async function seedConsoleWorld(
  gateway: TestGateway,
  clock: ShiftedClock,
  mcpUpstream: FakeMcpServer,
): Promise<SeededWorld> {
  const keys = await seedIdentities(gateway);
  await seedTraffic(gateway, clock, keys);
  clock.present();
  await seedRefusals(gateway, keys);
  return seedMcp(gateway, mcpUpstream, keys[0]!);
}

async function seedIdentities(gateway: TestGateway): Promise<SeededKey[]> {
  const post = (path: string, body: unknown) => adminOk(gateway, 'POST', `/ui/api/${path}`, body);
  await post('organizations', {
    organization_id: 'org-acme',
    organization_alias: 'Acme',
    max_budget: 500,
    budget_duration: '30d',
  });
  await post('organizations', {
    organization_id: 'org-globex',
    organization_alias: 'Globex',
    rpm_limit: 600,
  });
  await post('teams', {
    team_id: 'team-research',
    team_alias: 'Research',
    organization_id: 'org-acme',
    tpm_limit: 200000,
  });
  await post('teams', {
    team_id: 'team-support',
    team_alias: 'Support',
    organization_id: 'org-acme',
    rpm_limit: 120,
  });
  await post('teams', { team_id: 'team-platform', team_alias: 'Platform', organization_id: 'org-globex' });
  await post('users', {
    user_id: 'ada',
    email: 'ada@acme.test',
    role: 'org_admin',
    organization_id: 'org-acme',
  });
  await post('users', { user_id: 'grace', email: 'grace@globex.test', role: 'proxy_admin' });
  await post('users', {
    user_id: 'linus',
    email: 'linus@acme.test',
    role: 'member',
    team_id: 'team-research',
  });
  const specs = [
    { key_name: 'support-bot', team_id: 'team-support', rpm_limit: 300, model: 'gpt-4o-mini', weight: 5 },
    {
      key_name: 'research-notebook',
      team_id: 'team-research',
      user_id: 'linus',
      model: 'claude-sonnet',
      weight: 3,
    },
    {
      key_name: 'platform-ci',
      team_id: 'team-platform',
      max_budget: 50,
      budget_duration: '30d',
      model: 'claude-sonnet',
      weight: 2,
    },
    { key_name: 'edge-devices', team_id: 'team-platform', model: 'llama-edge', weight: 1 },
  ];
  const keys: SeededKey[] = [];
  for (const { model, weight, ...body } of specs)
    keys.push({ ...(await createKey(gateway, body)), model, weight });
  return keys;
}

/** A day of traffic, a request count per key and hour that rises into the working day and falls. */
async function seedTraffic(gateway: TestGateway, clock: ShiftedClock, keys: SeededKey[]): Promise<void> {
  for (let hoursAgo = 23; hoursAgo >= 1; hoursAgo--) {
    clock.hoursAgo(hoursAgo);
    const hourOfDay = 23 - hoursAgo;
    const busy = 1 + Math.round(2 * Math.sin((Math.PI * hourOfDay) / 23));
    // Keys call side by side, as separate clients would; each key's calls follow one another.
    await Promise.all(
      keys.map(async (key) => {
        const client = sdk(gateway, key.key);
        for (let call = 0; call < busy * key.weight; call += 2) {
          await client.chat.completions
            .create({
              model: key.model,
              messages: [{ role: 'user', content: `Summarise ticket ${hourOfDay}-${call}` }],
            })
            .catch(() => undefined);
        }
      }),
    );
    // An on-premises model that is down: an error every few hours.
    if (hoursAgo % 4 === 0) await chatIgnoringErrors(gateway, keys[1]!.key, 'legacy-davinci');
  }
}

/** Refusals the Overview counts for the current minute: one rate limit and one budget. */
async function seedRefusals(gateway: TestGateway, keys: SeededKey[]): Promise<void> {
  const limited = await createKey(gateway, { key_name: 'load-test', team_id: 'team-support', rpm_limit: 1 });
  for (let call = 0; call < 2; call++) await chatIgnoringErrors(gateway, limited.key, 'gpt-4o-mini');
  const broke = await createKey(gateway, { key_name: 'intern-sandbox', max_budget: 0 });
  await chatIgnoringErrors(gateway, broke.key, 'gpt-4o-mini');
  await chatIgnoringErrors(gateway, keys[0]!.key, 'gpt-4o-mini');
}

async function seedMcp(
  gateway: TestGateway,
  upstream: FakeMcpServer,
  caller: SeededKey,
): Promise<SeededWorld> {
  const server = await registerServer(gateway, {
    server_key: 'tickets',
    name: 'Ticket desk',
    base_url: upstream.url,
  });
  await registerServer(gateway, {
    server_key: 'wiki',
    name: 'Company wiki',
    base_url: 'http://127.0.0.1:9/mcp',
    enabled: false,
  });
  await bind(gateway, { server_id: server.server_id, scope_type: 'api_key', scope_id: caller.keyId });
  await bind(gateway, {
    server_id: server.server_id,
    scope_type: 'team',
    scope_id: 'team-research',
    tool_allowlist: ['echo', 'add'],
  });
  await setPolicy(gateway, { server_id: server.server_id, tool_name: 'echo', require_approval: 'manual' });
  await setPolicy(gateway, {
    server_id: server.server_id,
    tool_name: 'add',
    scope_type: 'team',
    scope_id: 'team-research',
    max_rpm: 30,
  });
  const client = await connectClient(gateway.baseUrl, caller.key);
  const text = 'Refund order 4411 (EUR 129.00)';
  await client.callTool({ name: 'tickets.echo', arguments: { text } }).catch(() => undefined);
  await client.callTool({ name: 'tickets.add', arguments: { a: 2, b: 40 } }).catch(() => undefined);
  return { pendingApproval: { text }, close: () => client.close() };
}

function sdk(gateway: TestGateway, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
}

async function chatIgnoringErrors(gateway: TestGateway, key: string, model: string): Promise<void> {
  await sdk(gateway, key)
    .chat.completions.create({ model, messages: [{ role: 'user', content: 'Ping' }] })
    .catch(() => undefined);
}
