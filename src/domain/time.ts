/**
 * Instants on both time axes. Every timestamp the product accepts is ISO 8601 with an
 * explicit zone (or a date alone, which means 00:00:00Z of that day), and every timestamp
 * it returns is `toISOString()` form: milliseconds and `Z`.
 */

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
// Date, 'T', time with optional fraction, and a zone: Z or ±hh:mm.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2})$/;

/** What `parseInstant` accepts, in the words every refusal of a bad instant uses. */
export const INSTANT_FORMAT =
  'an ISO 8601 date (2026-06-01, meaning 00:00:00Z) or date-time with a zone (2026-06-01T12:00:00Z)';

/**
 * Parses an ISO 8601 date or date-time. A date alone is 00:00:00Z of that day; a
 * date-time must carry a zone, so the same string means the same instant everywhere.
 * Returns null for anything else, including impossible calendar dates (2026-02-30).
 */
export function parseInstant(value: string): Date | null {
  const dateOnly = DATE_ONLY.exec(value);
  if (dateOnly) {
    const [, y, m, d] = dateOnly;
    return checkedUtc(Number(y), Number(m), Number(d), 0, 0, 0)
      ? new Date(`${value}T00:00:00.000Z`)
      : null;
  }
  const full = DATE_TIME.exec(value);
  if (!full) return null;
  const [, y, mo, d, h, mi, s] = full;
  if (!checkedUtc(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s ?? 0))) {
    return null;
  }
  const zone = full[8]!;
  if (zone !== 'Z' && zone !== 'z') {
    const zh = Number(zone.slice(1, 3));
    const zm = Number(zone.slice(4, 6));
    if (zh > 23 || zm > 59) return null;
  }
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * Parses an RFC 3339 instant (SupaCloud's `as_of`): a full date-time with a zone; a date
 * alone is not RFC 3339 and is rejected.
 */
export function parseRfc3339(value: string): Date | null {
  return DATE_TIME.test(value) ? parseInstant(value) : null;
}

function checkedUtc(y: number, m: number, d: number, h: number, mi: number, s: number): boolean {
  if (m < 1 || m > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return false;
  // setUTCFullYear, not Date.UTC: the latter maps years 0-99 to 1900-1999.
  const probe = new Date(0);
  probe.setUTCFullYear(y, m - 1, d);
  return probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d;
}

/** ISO form with milliseconds and Z, or null. */
export function isoOrNull(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}
