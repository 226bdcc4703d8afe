import { describe, expect, it } from 'vitest';
import { fromInputValue, toInputValue } from '../../explorer/src/instants.ts';
import { fitDomain, labelPlace, placeMarkers } from '../../explorer/src/timeAxis.ts';

const at = (iso: string) => Date.parse(iso);

describe('the view the timeline opens on', () => {
  it("fits the demo's 2026 history and leaves the 2035 test drive out, to be marked at the edge", () => {
    const demo = [
      '2026-04-01T08:00:00Z',
      '2026-05-10T18:30:00Z',
      '2026-05-10T18:30:00Z',
      '2026-05-10T18:30:00Z',
      '2026-05-10T18:30:00Z',
      '2026-09-01T00:00:00Z',
      '2026-08-16T09:14:02Z',
      '2035-01-15T10:00:00Z',
    ].map(at);
    const [start, end] = fitDomain(demo, at('2026-12-01T00:00:00Z'));
    expect(start.getTime()).toBeLessThan(at('2026-04-01T08:00:00Z'));
    expect(start.getTime()).toBeGreaterThan(at('2026-01-01T00:00:00Z'));
    expect(end.getTime()).toBeGreaterThan(at('2026-09-01T00:00:00Z'));
    expect(end.getTime()).toBeLessThan(at('2027-01-01T00:00:00Z'));
  });

  it('keeps every instant of an even spread, and opens around now when there is none', () => {
    const spread = Array.from({ length: 10 }, (_, i) => at(`20${10 + i}-01-01T00:00:00Z`));
    const [start, end] = fitDomain(spread, 0);
    expect(start.getTime()).toBeLessThan(spread[0]!);
    expect(end.getTime()).toBeGreaterThan(spread[9]!);
    const now = at('2026-12-01T00:00:00Z');
    const [a, b] = fitDomain([], now);
    expect(a.getTime()).toBeLessThan(now);
    expect(b.getTime()).toBeGreaterThan(now);
  });
});

describe('instant markers', () => {
  const x = (d: Date) => (d.getTime() - at('2026-01-01T00:00:00Z')) / 86_400_000; // a pixel a day
  const measure = (text: string) => text.length * 7;

  it('are labelled at their line, on another row when they would overlap, pinned to the edge when outside', () => {
    const placed = placeMarkers(
      [
        { id: 'now', label: 'now 3 Dec 2026', at: new Date('2026-12-03T00:00:00Z') },
        { id: 'true-at', label: 'true at 1 Dec 2026', at: new Date('2026-12-01T00:00:00Z') },
        { id: 'known-at', label: 'known at 1 Jan 2030', at: new Date('2030-01-01T00:00:00Z') },
      ],
      x,
      365,
      measure,
    );
    const byId = Object.fromEntries(placed.map((m) => [m.id, m]));
    expect(byId.now!.x).toBeCloseTo(336);
    expect(byId['known-at']!).toMatchObject({ x: null, edge: 'end' });
    // All three labels would overlap: each on a row of its own.
    expect(new Set(placed.map((m) => m.row))).toEqual(new Set([0, 1, 2]));
    for (const m of placed) {
      expect(m.labelLeft).toBeGreaterThanOrEqual(0);
      expect(m.labelLeft + m.labelWidth).toBeLessThanOrEqual(365);
    }
    // No two labels on one row overlap.
    for (const a of placed) {
      for (const b of placed) {
        if (a === b || a.row !== b.row) continue;
        const apart =
          a.labelLeft + a.labelWidth <= b.labelLeft || b.labelLeft + b.labelWidth <= a.labelLeft;
        expect(apart).toBe(true);
      }
    }
  });
});

describe("a bar's label", () => {
  it('goes in the bar when it fits, beside it when not, and stays in the lane', () => {
    expect(labelPlace({ left: 10, right: 200 }, 100, 300)).toEqual({
      left: 10,
      width: 100,
      inside: true,
    });
    expect(labelPlace({ left: 10, right: 30 }, 100, 300)).toEqual({
      left: 34,
      width: 100,
      inside: false,
    });
    // Near the lane's end: before the bar.
    expect(labelPlace({ left: 280, right: 300 }, 100, 300)).toEqual({
      left: 176,
      width: 100,
      inside: false,
    });
    // A lane narrower than the text: the whole lane.
    expect(labelPlace({ left: 0, right: 5 }, 500, 300)).toEqual({
      left: 0,
      width: 300,
      inside: false,
    });
  });
});

describe('instants typed in the explorer', () => {
  it('reads ISO 8601 in UTC (a date alone is midnight; a zone is converted), and refuses the rest', () => {
    expect(fromInputValue('2026-08-16T09:14:06Z')).toBe('2026-08-16T09:14:06.000Z');
    expect(fromInputValue('2026-08-16T09:14:06')).toBe('2026-08-16T09:14:06.000Z');
    expect(fromInputValue(' 2026-08-16 09:14 ')).toBe('2026-08-16T09:14:00.000Z');
    expect(fromInputValue('2026-08-16')).toBe('2026-08-16T00:00:00.000Z');
    expect(fromInputValue('2026-08-16T11:14:06+02:00')).toBe('2026-08-16T09:14:06.000Z');
    expect(fromInputValue('2026-08-16T09:14:06.5Z')).toBe('2026-08-16T09:14:06.500Z');
    for (const bad of [
      '',
      '16/08/2026',
      '2026-08-16 9:14 PM',
      '2026-02-30',
      '2026-08-16T25:00',
      'now',
    ]) {
      expect(fromInputValue(bad), bad).toBeNull();
    }
  });

  it('shows instants as ISO 8601 in UTC, milliseconds only when there are some', () => {
    expect(toInputValue('2026-08-16T09:14:06.000Z')).toBe('2026-08-16T09:14:06Z');
    expect(toInputValue('2026-08-16T09:14:06.500Z')).toBe('2026-08-16T09:14:06.500Z');
  });
});
