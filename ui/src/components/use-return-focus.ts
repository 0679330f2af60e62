/** Keyboard focus for forms that open from a button and close again. */
import { useEffect, useRef } from 'react';

/**
 * Gives the focus back to the button that opened a form (New key, Register server) once the form
 * and what it showed are closed, so a keyboard user is not left at the top of the page.
 * Attach the returned ref to the opening button; `open` is whether the form (or its result) shows.
 */
export function useReturnFocus(open: boolean) {
  const button = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(open);
  useEffect(() => {
    if (wasOpen.current && !open) button.current?.focus();
    wasOpen.current = open;
  }, [open]);
  return button;
}
