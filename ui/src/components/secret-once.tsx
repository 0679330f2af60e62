/** A new secret, shown once with a copy button; closing it is the only way on. */
import { useState } from 'react';

export function SecretOnce(props: {
  title: string;
  secret: string;
  onClose: () => void;
  children?: React.ReactNode;
}) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <section className="secret-once" role="dialog" aria-modal="false" aria-labelledby="secret-once-title">
      <h3 id="secret-once-title">{props.title}</h3>
      <p>This secret is shown once. Copy it now: the gateway keeps only a hash of it.</p>
      <div className="secret-row">
        <code data-testid="new-secret" className="secret">
          {props.secret}
        </code>
        <button type="button" onClick={copy}>
          Copy
        </button>
        <span role="status" aria-live="polite">
          {copied === 'yes'
            ? 'Copied.'
            : copied === 'failed'
              ? 'Copy failed: select the text and copy it by hand.'
              : ''}
        </span>
      </div>
      {props.children}
      <button type="button" className="button-secondary" onClick={props.onClose}>
        I have saved it
      </button>
    </section>
  );
}
