import type { ReactNode } from 'react';
import { ApiError } from '../api.ts';

/** Loading, error and empty states: each says what is happening and what to do. */

export function Loading({ what }: { what: string }) {
  return (
    <p className="status loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** Commands are shown as code, never as markdown-style backticks the page would show raw. */
export function WrongKeyMessage() {
  return (
    <>
      The gateway refused this key (401 Unauthorized): it is mistyped, revoked or from another
      gateway. Enter a valid key. On the embedded store, <code>npm start</code> prints the
      development key.
    </>
  );
}

export function ErrorNotice({
  error,
  onWrongKey,
  retry,
}: {
  error: unknown;
  onWrongKey?: () => void;
  retry?: () => void;
}) {
  if (error instanceof ApiError && error.isUnauthenticated) {
    return (
      <div className="status error" role="alert">
        <p>
          <WrongKeyMessage />
        </p>
        {onWrongKey && (
          <button type="button" onClick={onWrongKey}>
            Enter another key
          </button>
        )}
      </div>
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  const hint =
    error instanceof ApiError && error.code === 'FORBIDDEN'
      ? 'This key lacks the scope needed here; use a key with the read scope.'
      : error instanceof ApiError && error.code === 'NETWORK'
        ? 'Check that the gateway is running, then retry.'
        : 'Retry; if it keeps failing, the gateway log has the request id.';
  return (
    <div className="status error" role="alert">
      <p>
        <strong>Could not load:</strong> {message}
      </p>
      <p>{hint}</p>
      {retry && (
        <button type="button" onClick={retry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="status empty">{children}</p>;
}
