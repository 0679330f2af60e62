import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { apiError, type FakeRoute, fakeGateway } from '../../test-support/fake-gateway.ts';
import { renderConsole } from '../../test-support/render-console.tsx';
import { IdentitiesPage } from '../identities-page.tsx';
import { keyRecord, listOf, teamRecord, userRecord } from './test-fixtures.ts';
import type { KeyView } from './types.ts';

/** A gateway whose key list is `keys` (mutated by POST), with one team and one user to pick. */
function keysGateway(keys: KeyView[], routes: Record<string, FakeRoute> = {}) {
  return fakeGateway({
    '/ui/api/keys': (request) => {
      if (request.method === 'POST') {
        const body = request.body as Partial<KeyView>;
        const created = keyRecord({
          key_id: 'key-new',
          key_name: body.key_name ?? null,
          team_id: body.team_id ?? null,
        });
        keys.push(created);
        return { status: 201, json: { ...created, key: 'sk-live-secret-123' } };
      }
      // As the gateway does: team_id exactly, search as part of the name or id, ignoring case.
      const team = request.query.get('team_id');
      const search = request.query.get('search')?.toLowerCase();
      return listOf(
        keys.filter(
          (key) =>
            (team === null || key.team_id === team) &&
            (search === undefined || `${key.key_name} ${key.key_id}`.toLowerCase().includes(search)),
        ),
      );
    },
    '/ui/api/teams': () => listOf([teamRecord({ team_id: 'team-a', team_alias: 'Alpha' })]),
    '/ui/api/users': () => listOf([userRecord({ user_id: 'ana', email: 'ana@example.com' })]),
    ...routes,
  });
}

function openKeys(gateway: ReturnType<typeof fakeGateway>) {
  return renderConsole(<IdentitiesPage />, {
    fetch: gateway.fetch,
    path: '/identities/keys',
    route: '/identities/*',
  });
}

/** The text an input's aria-describedby points to (its hint and its error). */
function descriptionOf(element: HTMLElement): string {
  const ids = element.getAttribute('aria-describedby')?.split(' ') ?? [];
  return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
}

const keysTable = () => screen.findByRole('table', { name: 'Keys' });

describe('Keys tab', () => {
  it('shows a loading state while the key list is on its way', async () => {
    const gateway = keysGateway([], { '/ui/api/keys': () => new Promise(() => {}) });
    openKeys(gateway);
    const loading = await screen.findByText('Loading keys…');
    expect(loading.getAttribute('role')).toBe('status');
    expect(screen.queryByRole('table', { name: 'Keys' })).toBeNull();
  });

  it('says what to do next when there are no keys yet', async () => {
    openKeys(keysGateway([]));
    expect(
      await screen.findByText(
        'No keys yet. Create one with New key, then call /v1/chat/completions with it.',
      ),
    ).toBeTruthy();
    expect(screen.queryByRole('table', { name: 'Keys' })).toBeNull();
  });

  it('creates a key, shows its secret once with a copy button, and refreshes the list', async () => {
    const user = userEvent.setup();
    const writeText = vi.spyOn(navigator.clipboard, 'writeText').mockResolvedValue(undefined);
    const gateway = keysGateway([keyRecord({ key_id: 'key-1', key_name: 'existing' })]);
    openKeys(gateway);
    await keysTable();
    await user.click(screen.getByRole('button', { name: 'New key' }));
    expect(screen.getByRole('heading', { name: 'Create a key' })).toBeTruthy();
    await user.type(screen.getByLabelText('Key name'), 'ci-key');
    await user.selectOptions(screen.getByLabelText('Team'), 'team-a');
    await user.type(screen.getByLabelText('RPM limit'), '60');
    await user.type(screen.getByLabelText('Budget duration'), '30d');
    await user.type(screen.getByLabelText('Models'), 'gpt-4o, claude-sonnet');
    await user.type(screen.getByLabelText('Expires after'), '90d');
    await user.click(screen.getByRole('button', { name: 'Create key' }));

    const secret = await screen.findByTestId('new-secret');
    expect(secret.textContent).toBe('sk-live-secret-123');
    // The focus moves to the secret, whose form has gone.
    expect(document.activeElement).toBe(secret.closest('[tabindex="-1"]'));
    expect(document.activeElement).not.toBe(document.body);
    expect(gateway.to('/ui/api/keys').find((request) => request.method === 'POST')?.body).toEqual({
      key_name: 'ci-key',
      team_id: 'team-a',
      rpm_limit: 60,
      budget_duration: '30d',
      models: ['gpt-4o', 'claude-sonnet'],
      duration: '90d',
    });
    await user.click(screen.getByRole('button', { name: 'Copy' }));
    expect(writeText).toHaveBeenCalledWith('sk-live-secret-123');
    expect(await screen.findByText('Copied.')).toBeTruthy();
    // The list is read again and shows the new key, without its secret.
    const table = await keysTable();
    await within(table).findByText('ci-key');
    expect(table.textContent).not.toContain('sk-live-secret-123');
    expect(gateway.to('/ui/api/keys').filter((request) => request.method === 'GET').length).toBeGreaterThan(
      1,
    );

    await user.click(screen.getByRole('button', { name: 'I have saved it' }));
    expect(screen.queryByTestId('new-secret')).toBeNull();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'New key' }));
  });

  it('keeps the new secret out of the mutation cache once the create form has closed', async () => {
    const user = userEvent.setup();
    const { queryClient } = openKeys(keysGateway([]));
    await user.click(await screen.findByRole('button', { name: 'New key' }));
    await user.type(screen.getByLabelText('Key name'), 'ci-key');
    await user.click(screen.getByRole('button', { name: 'Create key' }));
    expect((await screen.findByTestId('new-secret')).textContent).toBe('sk-live-secret-123');
    const cachedAnswers = () =>
      JSON.stringify(
        queryClient
          .getMutationCache()
          .getAll()
          .map((mutation) => mutation.state.data),
      );
    // Only the SecretOnce box holds it now; a cached mutation would keep it for five minutes.
    await waitFor(() => expect(cachedAnswers()).not.toContain('sk-live-secret-123'));
    expect(queryClient.getMutationCache().getAll()).toHaveLength(0);
  });

  it('edits a limit by sending only the changed field, and shows a 400 naming rpm_limit under RPM limit', async () => {
    const user = userEvent.setup();
    const key = keyRecord({
      key_id: 'key-1',
      key_name: 'ci-key',
      rpm_limit: 60,
      tpm_limit: 1000,
      models: ['gpt-4o'],
    });
    let answer: 'refuse' | 'accept' = 'refuse';
    const gateway = keysGateway([key], {
      '/ui/api/keys/key-1': (request) =>
        answer === 'refuse'
          ? apiError(400, 'Invalid field rpm_limit: must be an integer from 0.', 'rpm_limit')
          : { ...key, ...(request.body as object) },
    });
    openKeys(gateway);
    await keysTable();
    await user.click(screen.getByRole('button', { name: 'Edit ci-key' }));
    expect(screen.getByRole('heading', { name: 'Edit ci-key' })).toBeTruthy();
    const rpm = screen.getByLabelText('RPM limit') as HTMLInputElement;
    expect(rpm.value).toBe('60');
    await user.clear(rpm);
    await user.type(rpm, '-5');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));

    await waitFor(() => expect(rpm.getAttribute('aria-invalid')).toBe('true'));
    expect(descriptionOf(rpm)).toContain('Invalid field rpm_limit: must be an integer from 0.');
    expect(gateway.to('/ui/api/keys/key-1')[0]?.method).toBe('PUT');
    expect(gateway.to('/ui/api/keys/key-1')[0]?.body).toEqual({ rpm_limit: -5 });
    expect(screen.queryByRole('alert')).toBeNull();

    answer = 'accept';
    await user.clear(rpm);
    await user.type(rpm, '120');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Saved changes.')).toBeTruthy();
    expect(gateway.to('/ui/api/keys/key-1')[1]?.body).toEqual({ rpm_limit: 120 });
    expect(rpm.getAttribute('aria-invalid')).toBeNull();
  });

  it('clears a limit with null when its field is emptied, and sends nothing when nothing changed', async () => {
    const user = userEvent.setup();
    const key = keyRecord({ key_id: 'key-1', key_name: 'ci-key', max_budget: 10 });
    const gateway = keysGateway([key], {
      '/ui/api/keys/key-1': (request) => ({ ...key, ...(request.body as object) }),
    });
    openKeys(gateway);
    await keysTable();
    await user.click(screen.getByRole('button', { name: 'Edit ci-key' }));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('Nothing to save: no field changed.')).toBeTruthy();
    expect(gateway.to('/ui/api/keys/key-1')).toHaveLength(0);

    await user.clear(screen.getByLabelText('Max budget (USD)'));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved changes.');
    expect(gateway.to('/ui/api/keys/key-1')[0]?.body).toEqual({ max_budget: null });
  });

  it('moves a key out of its team with team_id: null, and shows when it expires', async () => {
    const user = userEvent.setup();
    const key = keyRecord({ key_id: 'key-1', key_name: 'ci-key', team_id: 'team-a', expires_at: null });
    const gateway = keysGateway([key], {
      '/ui/api/keys/key-1': (request) => ({ ...key, ...(request.body as object) }),
    });
    openKeys(gateway);
    const table = await keysTable();
    expect(within(table).getByText('Never')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Edit ci-key' }));
    const team = (await screen.findByLabelText('Team')) as HTMLSelectElement;
    await waitFor(() => expect(team.value).toBe('team-a'));
    await user.selectOptions(team, 'No team');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved changes.');
    expect(gateway.to('/ui/api/keys/key-1')[0]?.body).toEqual({ team_id: null });
  });

  it("keeps a key's team when it is past the first 500 the option list holds, and says the list is cut", async () => {
    const user = userEvent.setup();
    const key = keyRecord({ key_id: 'key-1', key_name: 'ci-key', team_id: 'team-far' });
    const gateway = keysGateway([key], {
      // The option list is full: one team here stands for the API's first 500 of 501.
      '/ui/api/teams': () =>
        listOf([teamRecord({ team_id: 'team-a', team_alias: 'Alpha' })], { total: 501, limit: 500 }),
      '/ui/api/keys/key-1': (request) => ({ ...key, ...(request.body as object) }),
    });
    openKeys(gateway);
    await keysTable();
    await user.click(screen.getByRole('button', { name: 'Edit ci-key' }));
    const team = (await screen.findByLabelText('Team')) as HTMLSelectElement;
    await waitFor(() => expect(descriptionOf(team)).toContain('First 1 of 501 teams shown.'));
    // Shown as its own id, not as "No team" while the form still holds team-far.
    expect(team.value).toBe('team-far');
    expect(team.selectedOptions[0]?.textContent).toBe('team-far');

    await user.type(screen.getByLabelText('RPM limit'), '30');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved changes.');
    expect(gateway.to('/ui/api/keys/key-1')[0]?.body).toEqual({ rpm_limit: 30 });
  });

  it('asks the gateway to search every page once typing pauses, and pages through the matches', async () => {
    const user = userEvent.setup();
    const gateway = keysGateway([], {
      '/ui/api/keys': (request) => {
        if (request.query.get('search') !== 'late')
          return listOf([keyRecord({ key_id: 'key-1', key_name: 'ci-key' })], { total: 51 });
        return request.query.get('offset') === '50'
          ? listOf([keyRecord({ key_id: 'key-99', key_name: 'late-key-2' })], { total: 51, offset: 50 })
          : listOf([keyRecord({ key_id: 'key-51', key_name: 'late-key' })], { total: 51 });
      },
    });
    openKeys(gateway);
    await keysTable();
    await user.type(screen.getByLabelText('Search keys'), ' late');
    const table = await keysTable();
    expect(await within(table).findByText('late-key')).toBeTruthy();
    // One request for the whole word (typing paused once), trimmed, from the first page.
    const searches = gateway.to('/ui/api/keys').filter((request) => request.query.has('search'));
    expect(searches.map((request) => [request.query.get('search'), request.query.get('offset')])).toEqual([
      ['late', '0'],
    ]);
    await user.click(screen.getByRole('button', { name: 'Next page' }));
    expect(await within(await keysTable()).findByText('late-key-2')).toBeTruthy();
    expect(gateway.to('/ui/api/keys').at(-1)?.query.get('search')).toBe('late');
  });

  it('says no key matches when the gateway found none, and clearing the search shows them all', async () => {
    const user = userEvent.setup();
    openKeys(keysGateway([keyRecord({ key_id: 'key-1', key_name: 'ci-key' })]));
    await keysTable();
    await user.type(screen.getByLabelText('Search keys'), 'late');
    expect(await screen.findByText('No keys match.')).toBeTruthy();
    await user.clear(screen.getByLabelText('Search keys'));
    expect(within(await keysTable()).getByText('ci-key')).toBeTruthy();
  });

  it('blocks with PUT blocked: true and revokes with DELETE only after the confirmation', async () => {
    const user = userEvent.setup();
    const key = keyRecord({ key_id: 'key-1', key_name: 'ci-key' });
    const gateway = keysGateway([key], {
      '/ui/api/keys/key-1': (request) => {
        if (request.method === 'DELETE') return { deleted: true, key_id: 'key-1' };
        key.blocked = (request.body as { blocked: boolean }).blocked;
        return key;
      },
    });
    openKeys(gateway);
    await keysTable();
    await user.click(screen.getByRole('button', { name: 'Block ci-key' }));
    await screen.findByRole('button', { name: 'Unblock ci-key' });
    expect(gateway.to('/ui/api/keys/key-1')[0]?.method).toBe('PUT');
    expect(gateway.to('/ui/api/keys/key-1')[0]?.body).toEqual({ blocked: true });
    expect(within(await keysTable()).getByText('Blocked')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Edit ci-key' }));
    await user.click(screen.getByRole('button', { name: 'Revoke ci-key' }));
    expect(gateway.to('/ui/api/keys/key-1').filter((request) => request.method === 'DELETE')).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: 'Confirm revoke ci-key' }));
    await waitFor(() =>
      expect(gateway.to('/ui/api/keys/key-1').filter((request) => request.method === 'DELETE')).toHaveLength(
        1,
      ),
    );
    // The revoked key's edit form closes with it.
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'Edit ci-key' })).toBeNull());
  });

  it('shows a refused action (403) in the row it concerns', async () => {
    const user = userEvent.setup();
    const gateway = keysGateway([keyRecord({ key_id: 'key-1', key_name: 'ci-key' })], {
      '/ui/api/keys/key-1': () => apiError(403, 'The key belongs to another organization.'),
    });
    openKeys(gateway);
    await keysTable();
    await user.click(screen.getByRole('button', { name: 'Block ci-key' }));
    const row = screen.getByRole('row', { name: /ci-key/ });
    expect((await within(row).findByRole('alert')).textContent).toContain(
      'The key belongs to another organization.',
    );
  });

  it('narrows the keys by the search text and by team, both through the API', async () => {
    const user = userEvent.setup();
    const gateway = keysGateway([
      keyRecord({ key_id: 'key-1', key_name: 'billing-bot', team_id: 'team-a' }),
      keyRecord({ key_id: 'key-2', key_name: 'ci-runner' }),
    ]);
    openKeys(gateway);
    const table = await keysTable();
    await user.type(screen.getByLabelText('Search keys'), 'BILLING');
    await waitFor(() => expect(within(table).queryByText('ci-runner')).toBeNull());
    expect(within(table).getByText('billing-bot')).toBeTruthy();
    expect(gateway.to('/ui/api/keys').at(-1)?.query.get('search')).toBe('BILLING');

    await user.clear(screen.getByLabelText('Search keys'));
    await user.selectOptions(screen.getByLabelText('Owner'), 'Alpha');
    await waitFor(() => expect(gateway.to('/ui/api/keys').at(-1)?.query.get('team_id')).toBe('team-a'));
    await waitFor(() => expect(within(table).queryByText('ci-runner')).toBeNull());
  });

  it('shows each key as Active, Blocked or Expired, and a lifetime budget reached', async () => {
    openKeys(
      keysGateway([
        keyRecord({ key_id: 'key-1', key_name: 'live', expires_at: '2999-01-01T00:00:00.000Z' }),
        keyRecord({ key_id: 'key-2', key_name: 'stopped', blocked: true }),
        keyRecord({
          key_id: 'key-3',
          key_name: 'old',
          expires_at: '2020-01-01T00:00:00.000Z',
          max_budget: 5,
          spend: { total_cost: 5.5, cost_30d: 0, requests: 9, requests_30d: 0 },
        }),
      ]),
    );
    await keysTable();
    const headers = screen.getAllByRole('columnheader').map((header) => header.textContent);
    const status = (name: string) =>
      within(screen.getByRole('row', { name: new RegExp(name) })).getAllByRole('cell')[
        headers.indexOf('Status')
      ]?.textContent;
    expect(status('live')).toBe('Active');
    expect(status('stopped')).toBe('Blocked');
    expect(status('old')).toBe('Expired');
    expect(screen.getByRole('row', { name: /old/ }).textContent).toContain('Reached');
  });
});

describe('labels the browser suite finds', () => {
  /** Playwright's getByLabel matches any label containing the text, case-insensitively. */
  const labelsContaining = (text: string) =>
    Array.from(document.querySelectorAll('label')).filter((label) =>
      label.textContent?.toLowerCase().includes(text.toLowerCase()),
    );

  it('gives each field of the key form a label no other control on the tab contains', async () => {
    const user = userEvent.setup();
    openKeys(keysGateway([keyRecord({ key_id: 'key-1', key_name: 'ci' })]));
    await keysTable();
    await user.click(screen.getByRole('button', { name: 'New key' }));
    expect(document.activeElement?.textContent).toBe('Create a key');
    for (const label of [
      'Key name',
      'Team',
      'User',
      'Models',
      'RPM limit',
      'TPM limit',
      'Max parallel requests',
      'Max budget (USD)',
      'Budget duration',
    ])
      expect(labelsContaining(label).map((element) => element.textContent)).toEqual([label]);
  });
});
