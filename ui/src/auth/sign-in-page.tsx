/** Sign-in with the master key or an administrator's key; the key is checked before it is kept. */
import { type FormEvent, useState } from 'react';
import { ApiError } from '../api/client.ts';
import { Field } from '../components/field.tsx';
import { useSignIn } from './session.tsx';

export function SignInPage() {
  const signIn = useSignIn();
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (key.trim() === '') {
      setError('Enter the master key or an administrator key.');
      return;
    }
    setPending(true);
    setError(null);
    try {
      await signIn(key.trim());
    } catch (failure) {
      setError(signInError(failure));
    } finally {
      setPending(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <form onSubmit={submit} aria-labelledby="sign-in-title" noValidate>
        <h1 id="sign-in-title">Switchboard console</h1>
        <p>Sign in with the master key or the API key of a proxy or organization administrator.</p>
        <Field
          label="Admin key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={key}
          onChange={(event) => setKey(event.target.value)}
          error={error}
          hint="Kept in this tab's session storage until you sign out or close the tab."
        />
        <button type="submit" disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

function signInError(failure: unknown): string {
  if (failure instanceof ApiError) {
    if (failure.status === 401) return 'That key was not accepted. Check it and try again.';
    if (failure.status === 403)
      return "That key is valid but is not an administrator key. Use the master key or an admin user's key.";
    if (failure.status === 429) return failure.message;
    return failure.message;
  }
  return 'The gateway could not be reached.';
}
