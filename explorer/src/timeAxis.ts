/**
 * The timeline's time axis, as pure functions: the view it opens on (fitted to where the
 * facts are, outliers left at the edge), where the instant markers go without covering one
 * another, and where a bar's label goes so it stays readable whatever the bar's width.
 */

const DAY_MS = 86_400_000;

/** The quantile `q` (0–1) of sorted numbers, interpolated. */
function quantile(sorted: readonly number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.ceil(at);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (at - below);
}

/**
 * The span the timeline opens on: every instant that is not an outlier, padded a little.
 * An outlier lies more than three interquartile ranges (at least 30 days) beyond the middle
 * half of the instants, as a fact planned years ahead lies beyond a year of history: it is
 * marked at the edge instead of squeezing everything else into a strip.
 */
export function fitDomain(instants: readonly number[], fallback: number): [Date, Date] {
  const sorted = instants.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0)
    return [new Date(fallback - 30 * DAY_MS), new Date(fallback + 30 * DAY_MS)];
  const q1 = quantile(sorted, 0.25);
  const q3 = quantile(sorted, 0.75);
  const spread = Math.max(q3 - q1, 30 * DAY_MS);
  const inliers = sorted.filter((t) => t >= q1 - 3 * spread && t <= q3 + 3 * spread);
  const min = inliers[0]!;
  const max = inliers[inliers.length - 1]!;
  const pad = Math.max((max - min) * 0.06, DAY_MS);
  return [new Date(min - pad), new Date(max + pad)];
}

/** An instant marked on the axis: "now", "true at", "as known at". */
export interface Marker {
  id: string;
  label: string;
  at: Date;
}

/** Where a marker is drawn: its line (when in view) and its label, on one of two rows. */
export interface PlacedMarker extends Marker {
  /** The line's x in the lanes, or null when the instant is outside the view. */
  x: number | null;
  /** The label's left edge and width; `edge` says which side it is pinned to, if any. */
  labelLeft: number;
  labelWidth: number;
  edge: 'start' | 'end' | null;
  /** The row of labels it is on: the first where it covers no other. */
  row: number;
}

/**
 * The markers' places: a marker in view labelled at its line (kept inside the axis), one
 * outside pinned to the edge it lies beyond, its label given an arrow that points there; a label that would overlap
 * another goes to the next row, so none covers another (the ticks have a row of their own).
 */
export function placeMarkers(
  markers: readonly Marker[],
  x: (at: Date) => number,
  width: number,
  measure: (text: string) => number,
): PlacedMarker[] {
  const placed = markers.map((m): PlacedMarker => {
    const at = x(m.at);
    const edge: PlacedMarker['edge'] = at < 0 ? 'start' : at > width ? 'end' : null;
    const label = edge === 'start' ? `← ${m.label}` : edge === 'end' ? `${m.label} →` : m.label;
    const labelWidth = Math.min(measure(label) + 14, width);
    const left =
      edge === 'start'
        ? 0
        : edge === 'end'
          ? width - labelWidth
          : Math.min(Math.max(at - labelWidth / 2, 0), width - labelWidth);
    return { ...m, label, x: edge ? null : at, labelLeft: left, labelWidth, edge, row: 0 };
  });
  const byLeft = [...placed].sort((a, b) => a.labelLeft - b.labelLeft);
  const rowEnds: number[] = [];
  for (const m of byLeft) {
    let row = rowEnds.findIndex((end) => m.labelLeft >= end + 4);
    if (row < 0) row = rowEnds.length;
    m.row = row;
    rowEnds[row] = m.labelLeft + m.labelWidth;
  }
  return placed;
}

/**
 * Where a bar's label goes, in the lane's pixels: inside the bar from its start when it
 * fits there, else beside it (after it, or before it near the lane's end), kept within the
 * lane; truncated (ellipsis) only when the lane itself is narrower than the text. Each fact
 * has a lane of its own, so a label beside its bar covers no other bar.
 */
export function labelPlace(
  bar: { left: number; right: number },
  textWidth: number,
  laneWidth: number,
): { left: number; width: number; inside: boolean } {
  const width = Math.min(textWidth, laneWidth);
  const start = Math.max(bar.left, 0);
  const end = Math.min(bar.right, laneWidth);
  if (end - start >= width) return { left: start, width, inside: true };
  const after = Math.max(end, 0) + 4;
  if (after + width <= laneWidth) return { left: after, width, inside: false };
  const before = Math.min(start, laneWidth) - 4 - width;
  if (before >= 0) return { left: before, width, inside: false };
  return { left: Math.max(0, laneWidth - width), width, inside: false };
}

let canvas: HTMLCanvasElement | null = null;

/** The width of `text` in a font, in CSS pixels (a canvas measures it; no layout). */
export function textWidth(text: string, font: string): number {
  canvas ??= document.createElement('canvas');
  const context = canvas.getContext('2d');
  if (!context) return text.length * 7;
  context.font = font;
  return Math.ceil(context.measureText(text).width);
}
