/**
 * Instants as the explorer shows and edits them: UTC throughout (the gateway's instants
 * are UTC), edited in `<input type="datetime-local">` whose value has no zone.
 */

/** `2026-08-16T09:14:06.000Z` → `2026-08-16T09:14:06` for a datetime-local input. */
export function toInputValue(iso: string): string {
  return iso.slice(0, 19);
}

/** A datetime-local value (read as UTC) → ISO instant, or null when empty or invalid. */
export function fromInputValue(value: string): string | null {
  if (!value) return null;
  const withSeconds = value.length === 16 ? `${value}:00` : value;
  const date = new Date(`${withSeconds}Z`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

const DAY_FORMAT = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
});
const TIME_FORMAT = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** `16 Aug 2026`. */
export function formatDay(iso: string): string {
  return DAY_FORMAT.format(new Date(iso));
}

/** `16 Aug 2026, 09:14:06 UTC`. */
export function formatInstant(iso: string): string {
  return `${TIME_FORMAT.format(new Date(iso))} UTC`;
}
