import { useEffect, useId, useState } from 'react';
import { fromInputValue, toInputValue } from '../instants.ts';

/** The two instants every view is read at; null means "now" (the gateway's clock). */
export interface Instants {
  validAt: string | null;
  knownAt: string | null;
}

/**
 * One instant, shown and typed as ISO 8601 in UTC (`2026-08-16T09:14:06Z`) whatever the
 * browser's locale; a date alone is 00:00 UTC, another zone is converted. It takes effect
 * on Enter or when the field is left. `nullable`: it may be emptied (by hand or with its
 * button), which means `empty` ("now" unless said: a key's expiry's is "never"), shown as
 * the placeholder and on the button; otherwise an emptied field keeps the last instant.
 * Text that is not an instant is refused, saying why, and changes nothing.
 */
export function InstantInput({
  label,
  hint,
  value,
  onChange,
  testId,
  nullable = true,
  empty = 'now',
}: {
  label: string;
  hint?: string;
  value: string | null;
  onChange: (value: string | null) => void;
  testId?: string;
  nullable?: boolean;
  empty?: 'now' | 'never';
}) {
  const id = useId();
  const shown = value ? toInputValue(value) : '';
  const [text, setText] = useState(shown);
  const [invalid, setInvalid] = useState(false);
  // A new value from outside (the Now button, another page) replaces what is shown.
  useEffect(() => {
    setText(shown);
    setInvalid(false);
  }, [shown]);
  const commit = () => {
    const typed = text.trim();
    if (typed === '') {
      setInvalid(false);
      if (nullable) onChange(null);
      else setText(shown);
      return;
    }
    const instant = fromInputValue(typed);
    setInvalid(instant === null);
    if (instant !== null && instant !== value) onChange(instant);
    if (instant !== null) setText(toInputValue(instant));
  };
  return (
    <div className="instant">
      <label htmlFor={id}>
        {label} {hint && <span className="hint">{hint}</span>}
      </label>
      <div className="instant-row">
        <input
          id={id}
          type="text"
          inputMode="text"
          autoComplete="off"
          spellCheck={false}
          placeholder={nullable ? empty : 'YYYY-MM-DDTHH:MM:SSZ'}
          data-testid={testId}
          value={text}
          aria-invalid={invalid}
          aria-describedby={invalid ? `${id}-error` : undefined}
          onChange={(event) => setText(event.currentTarget.value)}
          onBlur={commit}
          onKeyDown={(event) => {
            if (event.key === 'Enter') {
              event.preventDefault();
              commit();
            }
          }}
        />
        {nullable && (
          <button type="button" onClick={() => onChange(null)} disabled={value === null}>
            {empty === 'now' ? 'Now' : 'Never'}
          </button>
        )}
      </div>
      {invalid && (
        <p className="input-error" id={`${id}-error`} role="alert">
          Not an instant: type ISO 8601 in UTC, e.g. 2026-08-16T09:14:06Z or 2026-08-16
        </p>
      )}
    </div>
  );
}

/** "True at" (valid time) and "as known at" (transaction time), in UTC; empty: now. */
export function InstantControls({
  instants,
  onChange,
}: {
  instants: Instants;
  onChange: (instants: Instants) => void;
}) {
  return (
    <fieldset className="instants">
      <legend>Read the store at (ISO 8601, UTC; empty means now)</legend>
      <InstantInput
        label="True at"
        hint="valid time: when it held in the world"
        value={instants.validAt}
        testId="true-at"
        onChange={(validAt) => onChange({ ...instants, validAt })}
      />
      <InstantInput
        label="As known at"
        hint="transaction time: what the store believed then"
        value={instants.knownAt}
        testId="known-at"
        onChange={(knownAt) => onChange({ ...instants, knownAt })}
      />
    </fieldset>
  );
}
