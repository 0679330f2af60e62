/** A destructive action that asks once more in place (no modal): "Revoke" → "Confirm revoke" / "Cancel". */
import { useState } from 'react';

export function ConfirmButton(props: {
  label: string;
  confirmLabel?: string;
  onConfirm: () => void;
  disabled?: boolean;
  pending?: boolean;
  /** The first button's accessible name when the label alone is ambiguous in a table ("Revoke ci-key"). */
  ariaLabel?: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button
        type="button"
        className="button-danger"
        aria-label={props.ariaLabel}
        disabled={props.disabled || props.pending}
        onClick={() => setAsking(true)}
      >
        {props.pending ? `${props.label}…` : props.label}
      </button>
    );
  return (
    <span className="confirm">
      <button
        type="button"
        className="button-danger"
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirmLabel ?? `Confirm ${props.label.toLowerCase()}`}
      </button>
      <button type="button" className="button-secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
