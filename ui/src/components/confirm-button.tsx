/**
 * A destructive action that asks once more in place (no modal): "Revoke" → "Confirm revoke" / "Cancel".
 * The focus follows the question: it moves to the confirm button when asked, and back to the first
 * button on Cancel (or Escape), so a keyboard user never lands at the top of the page.
 */
import { type KeyboardEvent, useEffect, useRef, useState } from 'react';

export function ConfirmButton(props: {
  label: string;
  confirmLabel?: string;
  onConfirm: () => void;
  disabled?: boolean;
  pending?: boolean;
  /**
   * What the action applies to, when the label alone is ambiguous in a table: with target "ci-key"
   * the buttons are named "Revoke ci-key" and "Confirm revoke ci-key" (their visible text stays
   * "Revoke" and "Confirm revoke").
   */
  target?: string;
  /** The first button's accessible name only (the confirm button keeps its text); prefer `target`. */
  ariaLabel?: string;
}) {
  const [asking, setAsking] = useState(false);
  const first = useRef<HTMLButtonElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  // Set by a user's click, so the focus moves only then (not when the component first renders).
  const moveFocus = useRef(false);
  useEffect(() => {
    if (!moveFocus.current) return;
    moveFocus.current = false;
    (asking ? confirm : first).current?.focus();
  }, [asking]);
  const ask = (next: boolean) => {
    moveFocus.current = true;
    setAsking(next);
  };
  const confirmText = props.confirmLabel ?? `Confirm ${props.label.toLowerCase()}`;
  const target = props.target;

  if (!asking)
    return (
      <button
        ref={first}
        type="button"
        className="button-danger"
        aria-label={target ? `${props.label} ${target}` : props.ariaLabel}
        disabled={props.disabled || props.pending}
        onClick={() => ask(true)}
      >
        {props.pending ? `${props.label}…` : props.label}
      </button>
    );
  const cancelOnEscape = (event: KeyboardEvent) => {
    if (event.key === 'Escape') ask(false);
  };
  return (
    <span className="confirm">
      <button
        ref={confirm}
        type="button"
        className="button-danger"
        aria-label={target ? `${confirmText} ${target}` : undefined}
        onKeyDown={cancelOnEscape}
        onClick={() => {
          ask(false);
          props.onConfirm();
        }}
      >
        {confirmText}
      </button>
      <button
        type="button"
        className="button-secondary"
        aria-label={target ? `Cancel ${props.label.toLowerCase()} ${target}` : undefined}
        onKeyDown={cancelOnEscape}
        onClick={() => ask(false)}
      >
        Cancel
      </button>
    </span>
  );
}
