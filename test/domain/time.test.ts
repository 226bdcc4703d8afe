import { describe, expect, it } from 'vitest';
import { isoOrNull, parseInstant, parseRfc3339 } from '../../src/domain/time.js';

const iso = (value: string): string | null => parseInstant(value)?.toISOString() ?? null;

describe('parseInstant', () => {
  it('reads a date alone as 00:00:00Z of that day', () => {
    expect(iso('2026-06-01')).toBe('2026-06-01T00:00:00.000Z');
    expect(iso('2024-02-29')).toBe('2024-02-29T00:00:00.000Z');
    expect(iso('2026-12-31')).toBe('2026-12-31T00:00:00.000Z');
  });

  it('reads a date-time with Z or an offset as the same instant everywhere', () => {
    expect(iso('2026-06-01T12:00:00Z')).toBe('2026-06-01T12:00:00.000Z');
    expect(iso('2026-06-01T12:00:00+02:00')).toBe('2026-06-01T10:00:00.000Z');
    expect(iso('2026-06-01T12:00:00-00:30')).toBe('2026-06-01T12:30:00.000Z');
    expect(iso('2026-06-01T00:30:00+01:00')).toBe('2026-05-31T23:30:00.000Z');
    // Seconds are optional; lower-case t / z are ISO 8601 too.
    expect(iso('2026-06-01T12:00Z')).toBe('2026-06-01T12:00:00.000Z');
    expect(iso('2026-06-01t12:00:00z')).toBe('2026-06-01T12:00:00.000Z');
  });

  it('keeps millisecond precision (finer digits are accepted and truncated)', () => {
    expect(iso('2026-06-01T12:00:00.001Z')).toBe('2026-06-01T12:00:00.001Z');
    expect(iso('2026-06-01T12:00:00.5Z')).toBe('2026-06-01T12:00:00.500Z');
    expect(iso('2026-06-01T12:00:00.123456789Z')).toBe('2026-06-01T12:00:00.123Z');
    expect(parseInstant('2026-06-01T12:00:00.001Z')!.getTime()).toBe(
      parseInstant('2026-06-01T12:00:00Z')!.getTime() + 1,
    );
  });

  it('round-trips toISOString()', () => {
    for (const value of [
      '1970-01-01T00:00:00.000Z',
      '2026-02-28T23:59:59.999Z',
      '9999-12-31T23:59:59.999Z',
    ]) {
      expect(iso(value)).toBe(value);
    }
  });

  it.each([
    ['a date-time without a zone', '2026-06-01T12:00:00'],
    ['a date-time without a zone or seconds', '2026-06-01T12:00'],
    ['a space instead of T', '2026-06-01 12:00:00Z'],
    ['an impossible day', '2026-02-30'],
    ['an impossible day with a time', '2026-02-30T00:00:00Z'],
    ['29 February of a common year', '2025-02-29'],
    ['month 13', '2026-13-01'],
    ['month 0', '2026-00-10'],
    ['day 0', '2026-06-00'],
    ['day 32', '2026-01-32'],
    ['hour 24', '2026-06-01T24:00:00Z'],
    ['minute 60', '2026-06-01T12:60:00Z'],
    ['second 60', '2026-06-01T12:00:60Z'],
    ['an offset of 24 hours', '2026-06-01T12:00:00+24:00'],
    ['an offset with 60 minutes', '2026-06-01T12:00:00+01:60'],
    ['an offset without a colon', '2026-06-01T12:00:00+0200'],
    ['a one-digit month', '2026-6-01'],
    ['an expanded year', '+002026-06-01'],
    ['a trailing space', '2026-06-01 '],
    ['a leading space', ' 2026-06-01'],
    ['garbage', 'yesterday'],
    ['a number', '1767225600000'],
    ['the empty string', ''],
  ])('rejects %s (%j)', (_why, value) => {
    expect(parseInstant(value)).toBeNull();
  });

  it('checks leap years in years 0-99 too (Date.UTC would read them as 1900-1999)', () => {
    expect(parseInstant('0000-02-29')?.toISOString()).toBe('0000-02-29T00:00:00.000Z');
    expect(parseInstant('0004-02-29')).not.toBeNull();
    expect(parseInstant('0001-02-29')).toBeNull();
  });
});

describe('parseRfc3339', () => {
  it('accepts a full date-time with a zone', () => {
    expect(parseRfc3339('2026-06-01T12:00:00Z')?.toISOString()).toBe('2026-06-01T12:00:00.000Z');
    expect(parseRfc3339('2026-06-01T12:00:00.250+02:00')?.toISOString()).toBe(
      '2026-06-01T10:00:00.250Z',
    );
  });

  it('rejects a date alone, which parseInstant accepts', () => {
    expect(parseInstant('2026-06-01')).not.toBeNull();
    expect(parseRfc3339('2026-06-01')).toBeNull();
  });

  it('rejects what parseInstant rejects', () => {
    for (const value of ['2026-06-01T12:00:00', '2026-02-30T00:00:00Z', 'garbage', '']) {
      expect(parseRfc3339(value)).toBeNull();
    }
  });
});

describe('isoOrNull', () => {
  it('formats with milliseconds and Z, and passes null through', () => {
    expect(isoOrNull(new Date(Date.UTC(2026, 5, 1, 12)))).toBe('2026-06-01T12:00:00.000Z');
    expect(isoOrNull(null)).toBeNull();
    expect(isoOrNull(undefined)).toBeNull();
  });
});
