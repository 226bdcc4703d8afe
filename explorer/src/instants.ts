/**
 * Instants as the explorer shows and edits them: ISO 8601 in UTC throughout (the
 * gateway's instants are UTC), typed as text, so the browser's locale (a 12-hour clock,
 * another calendar's digits) never changes what is shown or read.
 */

/** `2026-08-16T09:14:06.000Z` → `2026-08-16T09:14:06Z` (milliseconds kept when not zero). */
export function toInputValue(iso: string): string {
  return iso.endsWith('.000Z') ? `${iso.slice(0, 19)}Z` : iso;
}

const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Typed text → ISO instant, or null when it is not one. ISO 8601: a date (00:00 UTC), a
 * date and time to the minute, second or millisecond, `T` or a space between them; without
 * a zone the time is UTC, with one (`Z`, `+02:00`) it is converted to UTC. A date that does
 * not exist (30 February) is not one.
 */
export function fromInputValue(value: string): string | null {
  const match = ISO_INSTANT.exec(value.trim());
  if (!match) return null;
  const [, y, mo, d, h = '00', mi = '00', sec = '00', ms = '', zone = 'Z'] = match;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const millis = (ms || '.0').slice(1).padEnd(3, '0');
  const text = `${y}-${mo}-${d}T${h}:${mi}:${sec}.${millis}${offset}`;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // The fields as typed must name a real day and time (Date rolls 30 February over).
  const check = new Date(`${y}-${mo}-${d}T${h}:${mi}:${sec}.${millis}Z`);
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() + 1 !== Number(mo) ||
    check.getUTCDate() !== Number(d) ||
    check.getUTCHours() !== Number(h) ||
    check.getUTCMinutes() !== Number(mi)
  ) {
    return null;
  }
  return date.toISOString();
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
