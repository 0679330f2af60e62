import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { App } from './app.tsx';
import { keyRecord, listOf } from './pages/identities/test-fixtures.ts';
import type { KeyView, ListPage } from './pages/identities/types.ts';
import { apiError, fakeGateway, type RecordedRequest } from './test-support/fake-gateway.ts';
import { stubResizeObserver } from './test-support/render-console.tsx';

const ALPHA_KEY = 'sk-alpha-master';
const BETA_KEY = 'sk-beta-org-admin';

const bearer = (request: RecordedRequest) => request.headers.authorization?.replace('Bearer ', '');

/**
 * Two administrators whose answers differ: alpha (the master key) sees the key "alpha-service", beta
 * (an organization administrator) sees "beta-service", and beta's key list waits until the test lets
 * it go, so the test can look at what beta is shown before beta's own answer arrives.
 */
function twoAdminsGateway() {
  let releaseBeta: (page: ListPage<KeyView>) => void = () => {};
  const betaKeys = new Promise<ListPage<KeyView>>((resolve) => {
    releaseBeta = resolve;
  });
  const gateway = fakeGateway({
    '/ui/api/session': (request) =>
      bearer(request) === ALPHA_KEY
        ? { actor: { kind: 'master' } }
        : { actor: { kind: 'user', user_id: 'beta', role: 'org_admin', organization_id: 'org-b' } },
    '/ui/api/keys': (request) =>
      bearer(request) === ALPHA_KEY
        ? listOf([keyRecord({ key_id: 'key-a', key_name: 'alpha-service', team_id: 'team-a' })])
        : betaKeys,
    '/ui/api/teams': () => listOf([]),
    '/ui/api/users': () => listOf([]),
  });
  return {
    gateway,
    releaseBeta: () => releaseBeta(listOf([keyRecord({ key_id: 'key-b', key_name: 'beta-service' })])),
  };
}

async function signInWith(user: ReturnType<typeof userEvent.setup>, key: string) {
  await user.type(screen.getByLabelText('Admin key'), key);
  await user.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('App sessions', () => {
  beforeEach(() => {
    stubResizeObserver();
    window.history.replaceState(null, '', '/ui/identities/keys');
  });
  afterEach(() => window.history.replaceState(null, '', '/'));

  it('shows the next administrator on the same tab nothing the previous one loaded', async () => {
    const user = userEvent.setup();
    const { gateway, releaseBeta } = twoAdminsGateway();
    render(<App fetch={gateway.fetch} />);

    await signInWith(user, ALPHA_KEY);
    const alphaTable = await screen.findByRole('table', { name: 'Keys' });
    expect(within(alphaTable).getByText('alpha-service')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: 'Sign out' }));
    await signInWith(user, BETA_KEY);
    expect(await screen.findByTestId('actor')).toHaveProperty('textContent', 'Org admin beta (org-b)');
    // Beta's own list is still on its way: beta sees it loading, not alpha's cached keys.
    expect(await screen.findByText('Loading keys…')).toBeTruthy();
    expect(screen.queryByText('alpha-service')).toBeNull();

    releaseBeta();
    const betaTable = await screen.findByRole('table', { name: 'Keys' });
    expect(within(betaTable).getByText('beta-service')).toBeTruthy();
    expect(screen.queryByText('alpha-service')).toBeNull();
    const keyLists = gateway.to('/ui/api/keys').map(bearer);
    expect(keyLists).toEqual([ALPHA_KEY, BETA_KEY]);
  });
});

describe('restoring the session kept in this tab', () => {
  const STORED = 'switchboard.console.key';
  beforeEach(() => {
    stubResizeObserver();
    window.history.replaceState(null, '', '/ui/identities/keys');
    sessionStorage.setItem(STORED, ALPHA_KEY);
  });
  afterEach(() => {
    sessionStorage.clear();
    window.history.replaceState(null, '', '/');
  });

  it('keeps the key while the gateway cannot be reached, and Try again signs in once it answers', async () => {
    const user = userEvent.setup();
    const { gateway } = twoAdminsGateway();
    let reachable = false;
    const flaky = ((input: RequestInfo | URL, init?: RequestInit) =>
      reachable
        ? gateway.fetch(input, init)
        : Promise.reject(new TypeError('Failed to fetch'))) as typeof fetch;
    render(<App fetch={flaky} />);

    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/Your session could not be restored: The gateway could not be reached/);
    expect(sessionStorage.getItem(STORED)).toBe(ALPHA_KEY);
    reachable = true;
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByTestId('actor')).toHaveProperty('textContent', 'Master key');
  });

  it('forgets a key the gateway refuses and shows sign-in', async () => {
    const gateway = fakeGateway({ '/ui/api/session': () => apiError(401, 'Invalid API key.') });
    render(<App fetch={gateway.fetch} />);
    expect(await screen.findByLabelText('Admin key')).toBeTruthy();
    expect(sessionStorage.getItem(STORED)).toBeNull();
  });

  it('"Sign in with another key" forgets the kept key while the gateway is unreachable', async () => {
    const user = userEvent.setup();
    render(<App fetch={(() => Promise.reject(new TypeError('Failed to fetch'))) as typeof fetch} />);
    await user.click(await screen.findByRole('button', { name: 'Sign in with another key' }));
    expect(await screen.findByLabelText('Admin key')).toBeTruthy();
    expect(sessionStorage.getItem(STORED)).toBeNull();
  });
});
