import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { App } from './app.tsx';
import { keyRecord, listOf } from './pages/identities/test-fixtures.ts';
import type { KeyView, ListPage } from './pages/identities/types.ts';
import { fakeGateway, type RecordedRequest } from './test-support/fake-gateway.ts';
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
