import { type FormEvent, useId, useState } from 'react';
import { WrongKeyMessage } from './Status.tsx';

/** Asks for an API key; kept in this tab's session storage only. */
export function KeyForm({
  refused,
  onSubmit,
}: {
  refused: boolean;
  onSubmit: (key: string) => void;
}) {
  const id = useId();
  const [key, setKey] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (key.trim()) onSubmit(key.trim());
  };
  return (
    <form className="key-form" onSubmit={submit}>
      <h2>Open a workspace</h2>
      {refused && (
        <p className="status error" role="alert">
          <WrongKeyMessage />
        </p>
      )}
      <label htmlFor={id}>API key</label>
      <input
        id={id}
        type="password"
        autoComplete="off"
        spellCheck={false}
        value={key}
        required
        onChange={(e) => setKey(e.currentTarget.value)}
      />
      <p className="hint">
        Any key with the read scope. It stays in this browser tab (session storage) and is sent only
        to this gateway. <code>npm run keys</code> creates one.
      </p>
      <button type="submit">Open</button>
    </form>
  );
}
