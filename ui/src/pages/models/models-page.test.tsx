import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeploymentsAnswer, DeploymentView } from '../../api/console-types.ts';
import { apiError, fakeGateway } from '../../test-support/fake-gateway.ts';
import { renderConsole } from '../../test-support/render-console.tsx';
import { DEPLOYMENTS_REFRESH_MS, ModelsPage } from '../models-page.tsx';
import { fallbackChains } from './routing-topology.tsx';

const PATH = '/ui/api/console/deployments';

function deployment(overrides: Partial<DeploymentView> & { id: string }): DeploymentView {
  return {
    provider: 'openai',
    healthy: true,
    cooling_down_until: null,
    in_flight: 0,
    latency_ms: 120,
    time_to_first_token_ms: 80,
    recent_failures: 0,
    requests: 10,
    successes: 10,
    failures: 0,
    weight: 1,
    rpm_limit: null,
    tpm_limit: null,
    minute_usage: { requests: 0, tokens: 0 },
    utilization: 0,
    as_of: '2026-11-25T09:00:00.000Z',
    ...overrides,
  };
}

function answer(overrides: Partial<DeploymentsAnswer> = {}): DeploymentsAnswer {
  return {
    counts: { model_groups: 2, deployments: 3, healthy: 2, cooling_down: 1 },
    topology: {
      routing_strategy: 'simple-shuffle',
      num_retries: 2,
      allowed_fails: 3,
      cooldown_time: 5,
      enable_pre_call_checks: true,
      usage_tracked: true,
      fallbacks: { 'gpt-4o': ['gpt-4o-mini', 'claude'] },
      context_window_fallbacks: {},
    },
    model_groups: [
      {
        model: 'gpt-4o',
        healthy_deployments: 1,
        total_deployments: 2,
        endpoints: ['chat', 'responses'],
        deployments: [
          deployment({
            id: 'gpt-4o-east',
            rpm_limit: 60,
            minute_usage: { requests: 12, tokens: 300 },
            utilization: 0.2,
          }),
          deployment({
            id: 'gpt-4o-west',
            healthy: false,
            cooling_down_until: '2026-11-25T09:05:00.000Z',
            recent_failures: 3,
          }),
        ],
      },
      {
        model: 'embed',
        healthy_deployments: 1,
        total_deployments: 1,
        endpoints: ['embeddings'],
        deployments: [deployment({ id: 'embed-1' })],
      },
    ],
    fallback_events: [
      {
        timestamp: '2026-11-25T09:01:00.000Z',
        request_id: 'req_abc',
        model: 'gpt-4o',
        to_model: 'gpt-4o-mini',
        from_deployment: 'gpt-4o-west',
        to_deployment: 'mini-1',
        reason: 'rate_limited',
        attempt: 2,
      },
    ],
    ...overrides,
  };
}

function renderModels(respond: () => unknown) {
  const gateway = fakeGateway({ [PATH]: respond });
  renderConsole(<ModelsPage />, { fetch: gateway.fetch, path: '/models', route: '/models/*' });
  return gateway;
}

describe('Models and deployments page', () => {
  it('shows one section per model group, headed by its name, with its endpoints and deployments table', async () => {
    renderModels(() => answer());
    expect(await screen.findByRole('heading', { level: 1, name: 'Models and deployments' })).toBeTruthy();
    const group = await screen.findByRole('region', { name: 'gpt-4o' });
    expect(within(group).getByText('chat')).toBeTruthy();
    expect(within(group).getByText('responses')).toBeTruthy();
    const table = within(group).getByRole('table', { name: 'Deployments of gpt-4o' });
    expect(within(table).getAllByRole('row')).toHaveLength(3);
    expect(screen.getByRole('table', { name: 'Deployments of embed' })).toBeTruthy();
  });

  it('says Healthy or "Cooling down until <time>" in the Status column', async () => {
    renderModels(() => answer());
    const table = await screen.findByRole('table', { name: 'Deployments of gpt-4o' });
    const [east, west] = within(table).getAllByRole('row').slice(1);
    expect(within(east!).getByText('Healthy')).toBeTruthy();
    expect(within(west!).getByText(/^Cooling down until 25 Nov 2026/)).toBeTruthy();
  });

  it('shows utilisation against the deployment limit as text and a labelled meter', async () => {
    renderModels(() => answer());
    const table = await screen.findByRole('table', { name: 'Deployments of gpt-4o' });
    expect(within(table).getByText('12 of 60 rpm')).toBeTruthy();
    const meter = within(table).getByRole('meter', { name: 'Utilisation of gpt-4o-east' });
    expect(meter.getAttribute('aria-valuetext')).toBe('20% (12 of 60 rpm)');
    expect(within(table).getByText('No limit')).toBeTruthy();
  });

  it('shows the limits without a usage when minute usage is not counted (the gateway reports zeros then)', async () => {
    const untracked = answer();
    untracked.topology.usage_tracked = false;
    renderModels(() => untracked);
    const table = await screen.findByRole('table', { name: 'Deployments of gpt-4o' });
    expect(within(table).getByText('Limit 60 rpm (usage not counted)')).toBeTruthy();
    expect(within(table).queryByRole('meter')).toBeNull();
  });

  it('lists the fallback events with origin, destination, reason and attempt', async () => {
    renderModels(() => answer());
    const table = await screen.findByRole('table', { name: 'Fallback events' });
    const row = within(table).getAllByRole('row')[1]!;
    expect(within(row).getByText('req_abc')).toBeTruthy();
    expect(within(row).getByText('gpt-4o (gpt-4o-west) → gpt-4o-mini (mini-1)')).toBeTruthy();
    expect(within(row).getByText('rate_limited')).toBeTruthy();
    expect(within(row).getByText('2')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Recent fallback events' })).toBeTruthy();
  });

  it('shows the counts and the routing topology with its fallback chains', async () => {
    renderModels(() => answer());
    const cooling = await screen.findByRole('region', { name: 'Cooling down' });
    expect(within(cooling).getByText('1')).toBeTruthy();
    expect(within(screen.getByRole('region', { name: 'Deployments' })).getByText('3')).toBeTruthy();
    expect(screen.getByText('simple-shuffle')).toBeTruthy();
    expect(screen.getByText('gpt-4o → gpt-4o-mini → claude')).toBeTruthy();
  });

  it('tells the operator to add model_list entries when no model group exists', async () => {
    renderModels(() =>
      answer({
        counts: { model_groups: 0, deployments: 0, healthy: 0, cooling_down: 0 },
        model_groups: [],
        fallback_events: [],
      }),
    );
    expect(await screen.findByText('No model groups configured')).toBeTruthy();
    expect(screen.getByText('model_list')).toBeTruthy();
    expect(screen.getByText(/docs\/configuration\.md/)).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
  });

  it('shows a failed load as an alert with a retry that asks again', async () => {
    let calls = 0;
    renderModels(() => {
      calls += 1;
      return calls === 1 ? apiError(500, 'routing report unavailable') : answer();
    });
    expect((await screen.findByRole('alert')).textContent).toContain('routing report unavailable');
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('region', { name: 'gpt-4o' })).toBeTruthy();
  });

  it('keeps the last answer on screen, under an alert, when a refresh fails', async () => {
    let calls = 0;
    renderModels(() => {
      calls += 1;
      return calls === 1 ? answer() : apiError(503, 'gateway is draining');
    });
    await screen.findByRole('region', { name: 'gpt-4o' });
    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('showing the last answer');
    expect(alert.textContent).toContain('gateway is draining');
    expect(screen.getByRole('table', { name: 'Deployments of gpt-4o' })).toBeTruthy();
  });

  it('asks the gateway again when Refresh is pressed', async () => {
    const gateway = renderModels(() => answer());
    await screen.findByRole('region', { name: 'gpt-4o' });
    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    await screen.findByRole('button', { name: 'Refresh' });
    expect(gateway.to(PATH).length).toBe(2);
  });
});

describe('Models and deployments refresh', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks the gateway again every 10 seconds, showing the new state', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let cooling = false;
    const gateway = renderModels(() => {
      const current = answer();
      if (cooling) current.model_groups[1]!.deployments[0]!.cooling_down_until = '2026-11-25T09:10:00.000Z';
      return current;
    });
    const table = await screen.findByRole('table', { name: 'Deployments of embed' });
    expect(within(table).getByText('Healthy')).toBeTruthy();
    const before = gateway.to(PATH).length;
    cooling = true;
    await vi.advanceTimersByTimeAsync(DEPLOYMENTS_REFRESH_MS);
    expect(gateway.to(PATH).length).toBe(before + 1);
    expect(await within(table).findByText(/^Cooling down until/)).toBeTruthy();
  });

  it('leaves Refresh enabled and focused while a poll runs (a poll is not the operator’s action)', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let release: () => void = () => {};
    let calls = 0;
    renderModels(() => {
      calls += 1;
      if (calls === 1) return answer();
      const cooling = answer();
      cooling.model_groups[1]!.deployments[0]!.cooling_down_until = '2026-11-25T09:10:00.000Z';
      return new Promise((resolve) => {
        release = () => resolve(cooling);
      });
    });
    const table = await screen.findByRole('table', { name: 'Deployments of embed' });
    const refresh = screen.getByRole('button', { name: 'Refresh' }) as HTMLButtonElement;
    refresh.focus();
    await vi.advanceTimersByTimeAsync(DEPLOYMENTS_REFRESH_MS);
    expect(calls).toBe(2);
    expect(refresh.disabled).toBe(false);
    expect(refresh.getAttribute('aria-disabled')).toBeNull();
    expect(refresh.textContent).toBe('Refresh');
    expect(document.activeElement).toBe(refresh);
    release();
    expect(await within(table).findByText(/^Cooling down until/)).toBeTruthy();
    expect(document.activeElement).toBe(refresh);
  });

  it('marks Refresh busy only while the refresh the operator pressed runs, and keeps the focus on it', async () => {
    let release: () => void = () => {};
    let calls = 0;
    const gateway = renderModels(() => {
      calls += 1;
      if (calls === 1) return answer();
      return new Promise((resolve) => {
        release = () => resolve(answer());
      });
    });
    await screen.findByRole('region', { name: 'gpt-4o' });
    const refresh = screen.getByRole('button', { name: 'Refresh' });
    refresh.focus();
    await userEvent.keyboard('{Enter}');
    const busy = await screen.findByRole('button', { name: 'Refreshing…' });
    expect(busy.getAttribute('aria-disabled')).toBe('true');
    expect(document.activeElement).toBe(busy);
    await userEvent.keyboard('{Enter}');
    expect(gateway.to(PATH)).toHaveLength(2);
    release();
    expect(await screen.findByRole('button', { name: 'Refresh' })).toBe(document.activeElement);
  });
});

describe('fallbackChains', () => {
  it('reads both the config map and the LiteLLM list of single-key maps', () => {
    expect(fallbackChains({ a: ['b', 'c'] })).toEqual(['a → b → c']);
    expect(fallbackChains([{ a: ['b'] }, { c: ['d'] }])).toEqual(['a → b', 'c → d']);
    expect(fallbackChains({})).toEqual([]);
  });

  it('refuses shapes it does not understand (shown as JSON instead)', () => {
    expect(fallbackChains('gpt-4o')).toBeNull();
    expect(fallbackChains({ a: 'b' })).toBeNull();
  });
});
