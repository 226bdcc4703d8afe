import { useId } from 'react';
import { fromInputValue, toInputValue } from '../instants.ts';

/** The two instants every view is read at; null means "now" (the gateway's clock). */
export interface Instants {
  validAt: string | null;
  knownAt: string | null;
}

/**
 * One instant in UTC, edited in a datetime-local input. `nullable`: it may be emptied
 * (by hand or with its "Now" button), which means now; otherwise an emptied input keeps
 * the last instant.
 */
export function InstantInput({
  label,
  hint,
  value,
  onChange,
  testId,
  nullable = true,
}: {
  label: string;
  hint?: string;
  value: string | null;
  onChange: (value: string | null) => void;
  testId?: string;
  nullable?: boolean;
}) {
  const id = useId();
  return (
    <div className="instant">
      <label htmlFor={id}>
        {label} {hint && <span className="hint">{hint}</span>}
      </label>
      <div className="instant-row">
        <input
          id={id}
          type="datetime-local"
          step={1}
          data-testid={testId}
          value={value ? toInputValue(value) : ''}
          onChange={(event) => {
            // A half-typed date reads as empty with badInput: wait for the rest of it.
            if (event.currentTarget.validity.badInput) return;
            const instant = fromInputValue(event.currentTarget.value);
            if (instant || nullable) onChange(instant);
          }}
        />
        {nullable && (
          <button type="button" onClick={() => onChange(null)} disabled={value === null}>
            Now
          </button>
        )}
      </div>
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
      <legend>Read the store at (UTC; empty means now)</legend>
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
