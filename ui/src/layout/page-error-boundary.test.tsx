import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { lazy } from 'react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionProvider } from '../auth/session.tsx';
import { masterActor, TEST_ADMIN_KEY } from '../test-support/render-console.tsx';
import { Shell } from './shell.tsx';

function Broken(): never {
  throw new Error('Cannot read properties of undefined (reading "data").');
}

/** What a browser throws when a section's file is gone (a tab opened before an upgrade). */
const Vanished = lazy(() =>
  Promise.reject(new TypeError('Failed to fetch dynamically imported module: /ui/assets/spend-page-old.js')),
);

function renderShell(path: string) {
  render(
    <SessionProvider initial={{ key: TEST_ADMIN_KEY, actor: masterActor }} fetch={vi.fn()}>
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          <Route element={<Shell />}>
            <Route index element={<h1>Overview</h1>} />
            <Route path="models" element={<Broken />} />
            <Route path="spend" element={<Vanished />} />
          </Route>
        </Routes>
      </MemoryRouter>
    </SessionProvider>,
  );
}

describe('a page that fails inside the console frame', () => {
  afterEach(() => vi.restoreAllMocks());

  it('says the page could not be shown, offers Reload, keeps the navigation, and recovers on another page', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const user = userEvent.setup();
    renderShell('/models');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/This page could not be shown: Cannot read properties/);
    expect(screen.getAllByRole('button', { name: 'Reload' })).toHaveLength(1);
    await user.click(screen.getByRole('link', { name: 'Overview' }));
    expect((await screen.findByRole('heading', { name: 'Overview' })).tagName).toBe('H1');
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says a section that could not be fetched may come from an older console, to be reloaded', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    renderShell('/spend');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/This page could not be loaded: the console may have been updated/);
    expect(screen.getAllByRole('navigation', { name: 'Console sections' })).toHaveLength(1);
  });
});
