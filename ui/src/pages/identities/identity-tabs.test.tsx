import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Actor } from '../../auth/session.tsx';
import { apiError, type FakeRoute, fakeGateway } from '../../test-support/fake-gateway.ts';
import { orgAdminActor, renderConsole } from '../../test-support/render-console.tsx';
import { IdentitiesPage } from '../identities-page.tsx';
import { keyRecord, listOf, organizationRecord, teamRecord, userRecord } from './test-fixtures.ts';

const organizations = [
  organizationRecord({ organization_id: 'org-1', organization_alias: 'Acme', max_budget: 100 }),
];
const teams = [
  teamRecord({ team_id: 'team-a', team_alias: 'Alpha', organization_id: 'org-1', rpm_limit: 60 }),
];
const users = [userRecord({ user_id: 'ana', email: 'ana@example.com', organization_id: 'org-1' })];

function gateway(routes: Record<string, FakeRoute> = {}) {
  return fakeGateway({
    '/ui/api/keys': () => listOf([keyRecord({ key_id: 'key-1' })]),
    '/ui/api/organizations': (request) =>
      request.method === 'POST'
        ? { status: 201, json: organizationRecord({ organization_id: 'org-2' }) }
        : listOf(organizations),
    '/ui/api/teams': (request) =>
      request.method === 'POST' ? { status: 201, json: teamRecord({ team_id: 'team-b' }) } : listOf(teams),
    '/ui/api/users': (request) =>
      request.method === 'POST' ? { status: 201, json: userRecord({ user_id: 'bo' }) } : listOf(users),
    ...routes,
  });
}

function open(fake: ReturnType<typeof fakeGateway>, path: string, actor?: Actor) {
  return renderConsole(<IdentitiesPage />, { fetch: fake.fetch, path, route: '/identities/*', actor });
}

const posts = (fake: ReturnType<typeof fakeGateway>, path: string) =>
  fake.to(path).filter((request) => request.method === 'POST');

describe('Keys & identities tabs', () => {
  it('opens on the Keys tab and moves between tabs with links', async () => {
    const user = userEvent.setup();
    open(gateway(), '/identities');
    await screen.findByRole('table', { name: 'Keys' });
    expect(screen.getByTestId('location').textContent).toBe('/identities/keys');
    await user.click(screen.getByRole('link', { name: 'Teams' }));
    expect(await screen.findByRole('table', { name: 'Teams' })).toBeTruthy();
    expect(screen.getByTestId('location').textContent).toBe('/identities/teams');
    expect(screen.getByRole('link', { name: 'Teams' }).getAttribute('aria-current')).toBe('page');
  });

  it('lets an org admin read their organization but not create or change organizations', async () => {
    open(gateway(), '/identities/organizations', orgAdminActor('org-1'));
    const table = await screen.findByRole('table', { name: 'Organizations' });
    expect(within(table).getByText('Acme')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'New organization' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Edit / })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Delete / })).toBeNull();
    expect(screen.getByText(/Your organization, read-only/)).toBeTruthy();
  });

  it('lets a proxy admin create an organization with a budget', async () => {
    const user = userEvent.setup();
    const fake = gateway();
    open(fake, '/identities/organizations');
    await screen.findByRole('table', { name: 'Organizations' });
    await user.click(screen.getByRole('button', { name: 'New organization' }));
    await user.type(screen.getByLabelText('Organization alias'), 'Globex');
    await user.type(screen.getByLabelText('Max budget (USD)'), '250.5');
    await user.click(screen.getByRole('button', { name: 'Create organization' }));
    await waitFor(() => expect(posts(fake, '/ui/api/organizations')).toHaveLength(1));
    expect(posts(fake, '/ui/api/organizations')[0]?.body).toEqual({
      organization_alias: 'Globex',
      max_budget: 250.5,
    });
    await waitFor(() => expect(screen.queryByRole('heading', { name: 'Create an organization' })).toBeNull());
  });

  it('creates a team in the organization chosen, and shows a 403 on the form where it happened', async () => {
    const user = userEvent.setup();
    let refuse = true;
    const fake = gateway({
      '/ui/api/teams': (request) => {
        if (request.method !== 'POST') return listOf(teams);
        return refuse
          ? apiError(403, 'organization org-1 is outside your administration.')
          : { status: 201, json: teamRecord({ team_id: 'team-b' }) };
      },
    });
    open(fake, '/identities/teams');
    await screen.findByRole('table', { name: 'Teams' });
    await user.click(screen.getByRole('button', { name: 'New team' }));
    await user.type(screen.getByLabelText('Team alias'), 'Beta');
    await user.selectOptions(await screen.findByLabelText('Organization'), 'org-1');
    await user.type(screen.getByLabelText('TPM limit'), '9000');
    await user.click(screen.getByRole('button', { name: 'Create team' }));
    const form = screen.getByRole('form', { name: 'Create a team' });
    expect((await within(form).findByRole('alert')).textContent).toContain('outside your administration');
    expect(posts(fake, '/ui/api/teams')[0]?.body).toEqual({
      team_alias: 'Beta',
      organization_id: 'org-1',
      tpm_limit: 9000,
    });

    refuse = false;
    await user.click(screen.getByRole('button', { name: 'Create team' }));
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Create a team' })).toBeNull());
  });

  it('edits a team by sending only the changed field, and deletes one after the confirmation', async () => {
    const user = userEvent.setup();
    const fake = gateway({
      '/ui/api/teams/team-a': (request) =>
        request.method === 'DELETE'
          ? { deleted: true, team_id: 'team-a' }
          : { ...teams[0], ...(request.body as object) },
    });
    open(fake, '/identities/teams');
    await screen.findByRole('table', { name: 'Teams' });
    await user.click(screen.getByRole('button', { name: 'Edit Alpha' }));
    await user.type(screen.getByLabelText('Soft budget (USD)'), '20');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved changes.');
    expect(fake.to('/ui/api/teams/team-a')[0]?.method).toBe('PUT');
    expect(fake.to('/ui/api/teams/team-a')[0]?.body).toEqual({ soft_budget: 20 });

    await user.click(screen.getByRole('button', { name: 'Delete Alpha' }));
    await user.click(screen.getByRole('button', { name: 'Confirm delete Alpha' }));
    await waitFor(() => expect(fake.to('/ui/api/teams/team-a').at(-1)?.method).toBe('DELETE'));
  });

  it("changes a team's organization from its edit form, sending only that", async () => {
    const user = userEvent.setup();
    const fake = gateway({
      '/ui/api/organizations': () =>
        listOf([
          ...organizations,
          organizationRecord({ organization_id: 'org-2', organization_alias: 'Globex' }),
        ]),
      '/ui/api/teams/team-a': (request) => ({ ...teams[0], ...(request.body as object) }),
    });
    open(fake, '/identities/teams');
    await screen.findByRole('table', { name: 'Teams' });
    await user.click(screen.getByRole('button', { name: 'Edit Alpha' }));
    const organization = screen.getByLabelText('Organization') as HTMLSelectElement;
    await within(organization).findByRole('option', { name: 'Globex' });
    expect(organization.value).toBe('org-1');
    await user.selectOptions(organization, 'org-2');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    await screen.findByText('Saved changes.');
    expect(fake.to('/ui/api/teams/team-a')[0]?.body).toEqual({ organization_id: 'org-2' });
  });

  it('asks the gateway to search every page of teams, and says when none match', async () => {
    const user = userEvent.setup();
    const fake = gateway({
      '/ui/api/teams': (request) =>
        request.query.get('search') === 'zeta' ? listOf([], { total: 0 }) : listOf(teams, { total: 60 }),
    });
    open(fake, '/identities/teams');
    await screen.findByRole('table', { name: 'Teams' });
    await user.type(screen.getByLabelText('Search teams'), 'zeta');
    expect(await screen.findByText('No teams match.')).toBeTruthy();
    expect(fake.to('/ui/api/teams').at(-1)?.query.get('search')).toBe('zeta');
    expect(screen.getByText("Part of a team's id, alias or organization, on every page.")).toBeTruthy();
  });

  it("shows a user's organization when it is not among the organizations listed", async () => {
    const user = userEvent.setup();
    const far = userRecord({ user_id: 'zed', organization_id: 'org-far' });
    open(gateway({ '/ui/api/users': () => listOf([far]) }), '/identities/users');
    await screen.findByRole('table', { name: 'Users' });
    await user.click(screen.getByRole('button', { name: 'Edit zed' }));
    const organization = (await screen.findByLabelText('Organization')) as HTMLSelectElement;
    await screen.findByRole('option', { name: 'Acme' });
    expect(organization.value).toBe('org-far');
  });

  it('offers an org admin no Proxy admin role when creating a user', async () => {
    const user = userEvent.setup();
    open(gateway(), '/identities/users', orgAdminActor('org-1'));
    await screen.findByRole('table', { name: 'Users' });
    await user.click(screen.getByRole('button', { name: 'New user' }));
    const roles = within(screen.getByLabelText('Role'))
      .getAllByRole('option')
      .map((option) => option.textContent);
    expect(roles).toEqual(['Internal user', 'Org admin']);
  });

  it('refuses to create a user whose ID exists (POST would update it) next to User ID, and creates a new one', async () => {
    const user = userEvent.setup();
    const fake = gateway({
      '/ui/api/users/ana': () => users[0],
      '/ui/api/users/bo': () => apiError(404, 'user bo not found'),
    });
    open(fake, '/identities/users');
    await screen.findByRole('table', { name: 'Users' });
    await user.click(screen.getByRole('button', { name: 'New user' }));
    const id = screen.getByLabelText('User ID');
    await user.type(id, 'ana');
    await user.click(screen.getByRole('button', { name: 'Create user' }));
    await waitFor(() => expect(id.getAttribute('aria-invalid')).toBe('true'));
    expect(document.getElementById(`${id.id}-error`)?.textContent).toContain('already exists');
    expect(posts(fake, '/ui/api/users')).toHaveLength(0);

    await user.clear(id);
    await user.type(id, 'bo');
    await user.type(screen.getByLabelText('Email'), 'bo@example.com');
    await user.selectOptions(screen.getByLabelText('Role'), 'Org admin');
    await user.selectOptions(await screen.findByLabelText('Organization'), 'org-1');
    await user.click(screen.getByRole('button', { name: 'Create user' }));
    await waitFor(() => expect(posts(fake, '/ui/api/users')).toHaveLength(1));
    expect(posts(fake, '/ui/api/users')[0]?.body).toEqual({
      user_id: 'bo',
      email: 'bo@example.com',
      role: 'org_admin',
      organization_id: 'org-1',
    });
  });

  it('pages through a long list with the API offset, keeping the rows on screen while the next page loads', async () => {
    const user = userEvent.setup();
    let answerSecondPage: () => void = () => {};
    const secondPage = new Promise<void>((resolve) => {
      answerSecondPage = resolve;
    });
    const fake = gateway({
      '/ui/api/users': async (request) => {
        const offset = Number(request.query.get('offset'));
        if (request.query.get('limit') === '50' && offset === 50) await secondPage;
        return listOf([userRecord({ user_id: `user-${offset}` })], { total: 120, offset });
      },
    });
    open(fake, '/identities/users');
    await screen.findByText('user-0');
    expect(screen.getByText('1–1 of 120')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Next page' }));
    expect(await screen.findByText('Loading users…')).toBeTruthy();
    expect(screen.getByText('user-0')).toBeTruthy();
    answerSecondPage();
    expect(await screen.findByText('user-50')).toBeTruthy();
    expect(screen.queryByText('Loading users…')).toBeNull();
    expect(screen.getByText('51–51 of 120')).toBeTruthy();
  });

  it('says what to do next when there are no teams yet', async () => {
    open(gateway({ '/ui/api/teams': () => listOf([]) }), '/identities/teams');
    expect(await screen.findByText(/No teams yet. Create one with New team/)).toBeTruthy();
  });

  it.each([
    ['users', 'New user', ['User ID', 'Email', 'Role', 'Organization', 'Team']],
    ['teams', 'New team', ['Team alias', 'Organization', 'RPM limit', 'TPM limit', 'Max budget (USD)']],
    ['organizations', 'New organization', ['Organization alias', 'Budget duration']],
  ])(
    'labels each field of the %s form with text no other label on the tab contains',
    async (tab, button, labels) => {
      const user = userEvent.setup();
      open(gateway(), `/identities/${tab}`);
      await user.click(await screen.findByRole('button', { name: button }));
      const all = Array.from(document.querySelectorAll('label')).map((label) => label.textContent ?? '');
      for (const label of labels)
        expect(all.filter((text) => text.toLowerCase().includes(label.toLowerCase()))).toEqual([label]);
    },
  );

  it('warns an administrator editing their own user that a role change can lock them out', async () => {
    const user = userEvent.setup();
    const self = userRecord({ user_id: 'org-admin-1', role: 'org_admin', organization_id: 'org-1' });
    open(
      gateway({ '/ui/api/users': () => listOf([self, users[0]!]) }),
      '/identities/users',
      orgAdminActor('org-1'),
    );
    await screen.findByRole('table', { name: 'Users' });
    await user.click(screen.getByRole('button', { name: 'Edit ana' }));
    expect(screen.queryByText(/This is you/)).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Edit org-admin-1' }));
    expect(screen.getByRole('heading', { name: 'Edit org-admin-1' })).toBeTruthy();
    expect(screen.getByText(/This is you: another role or organization can end your access/)).toBeTruthy();
  });

  it('shows "Saving…" on a disabled button while an edit is on its way, then "Saved changes."', async () => {
    const user = userEvent.setup();
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const fake = gateway({
      '/ui/api/organizations/org-1': async (request) => {
        await answered;
        return { ...organizations[0], ...(request.body as object) };
      },
    });
    open(fake, '/identities/organizations');
    await screen.findByRole('table', { name: 'Organizations' });
    await user.click(screen.getByRole('button', { name: 'Edit Acme' }));
    await user.type(screen.getByLabelText('Budget duration'), '30d');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    const saving = await screen.findByRole('button', { name: 'Saving…' });
    expect((saving as HTMLButtonElement).disabled).toBe(true);
    answer();
    expect(await screen.findByText('Saved changes.')).toBeTruthy();
    expect(fake.to('/ui/api/organizations/org-1')[0]?.body).toEqual({ budget_duration: '30d' });
  });
});
