import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { ConfirmButton } from './confirm-button.tsx';

/** Two rows' Revoke buttons, as a key table shows them. */
function twoRows(onConfirm = vi.fn()) {
  render(
    <>
      <ConfirmButton label="Revoke" target="ci-key" onConfirm={onConfirm} />
      <ConfirmButton label="Revoke" target="billing-bot" onConfirm={onConfirm} />
    </>,
  );
  return onConfirm;
}

describe('ConfirmButton', () => {
  it('moves the focus to the confirm button when it asks, so Enter confirms from the keyboard', async () => {
    const user = userEvent.setup();
    const onConfirm = twoRows();
    await user.tab();
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Revoke ci-key' }));
    await user.keyboard('{Enter}');
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Confirm revoke ci-key' }));
    await user.keyboard('{Enter}');
    expect(onConfirm).toHaveBeenCalledTimes(1);
  });

  it('gives the focus back to the first button on Cancel and on Escape', async () => {
    const user = userEvent.setup();
    const onConfirm = twoRows();
    await user.click(screen.getByRole('button', { name: 'Revoke ci-key' }));
    await user.click(screen.getByRole('button', { name: 'Cancel revoke ci-key' }));
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Revoke ci-key' }));

    await user.keyboard('{Enter}');
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Confirm revoke ci-key' }));
    await user.keyboard('{Escape}');
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Revoke ci-key' }));
    expect(onConfirm).not.toHaveBeenCalled();
  });

  it("names each row's confirm button after its target while its text stays 'Confirm revoke'", async () => {
    const user = userEvent.setup();
    twoRows();
    await user.click(screen.getByRole('button', { name: 'Revoke ci-key' }));
    await user.click(screen.getByRole('button', { name: 'Revoke billing-bot' }));
    const confirms = screen.getAllByRole('button', { name: /^Confirm revoke/ });
    expect(confirms.map((button) => button.getAttribute('aria-label'))).toEqual([
      'Confirm revoke ci-key',
      'Confirm revoke billing-bot',
    ]);
    expect(confirms.map((button) => button.textContent)).toEqual(['Confirm revoke', 'Confirm revoke']);
  });

  it('does not take the focus when it first appears', () => {
    twoRows();
    expect(document.activeElement).toBe(document.body);
  });
});
