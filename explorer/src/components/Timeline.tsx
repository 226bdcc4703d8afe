import { useVirtualizer } from '@tanstack/react-virtual';
import { type ScaleTime, scaleUtc } from 'd3-scale';
import { select } from 'd3-selection';
import { type ZoomBehavior, type ZoomTransform, zoom, zoomIdentity } from 'd3-zoom';
import {
  type KeyboardEvent,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import type { TimelineFactFragment } from '../generated/operations.ts';
import { formatDay, formatInstant } from '../instants.ts';
import { LOOK_LABEL, lookOf, type Statement } from '../statements.ts';
import { fitDomain, labelPlace, placeMarkers, textWidth } from '../timeAxis.ts';
import { FactDetails } from './FactDetails.tsx';

const LABEL_HEIGHT = 22;
const LANE_HEIGHT = 26;
const ROW_PADDING = 10;
/** The bar labels' and markers' text, as styles.css sets it (measured to place labels). */
const BAR_FONT = '12px system-ui, sans-serif';
const MARKER_FONT = '12px system-ui, sans-serif';
/** Pixels per tick on the axis. */
const TICK_SPACING = 110;
/** How far one press of a zoom or move control goes. */
const ZOOM_STEP = 2;
const MOVE_STEP = 0.25;
/** The narrowest a bar is drawn, and the width of the mark of a fact beyond the view. */
const MIN_BAR = 6;
const EDGE_MARK = 22;
/** The height of a row of instant markers on the axis. */
const MARKER_ROW = 19;

function rowHeight(statement: Statement): number {
  return LABEL_HEIGHT + statement.facts.length * LANE_HEIGHT + ROW_PADDING;
}

/** The instants marked on the axis: now always, "true at" and "as known at" when chosen. */
export interface TimelineInstants {
  now: Date;
  validAt: Date | null;
  knownAt: Date | null;
}

/** The span the timeline opens on: the facts' instants (outliers at the edge) and the chosen ones. */
function domainOf(statements: readonly Statement[], instants: TimelineInstants): [Date, Date] {
  const all: number[] = [];
  for (const chosen of [instants.validAt, instants.knownAt]) if (chosen) all.push(chosen.getTime());
  for (const row of statements) {
    for (const fact of row.facts) {
      all.push(Date.parse(fact.validAt));
      if (fact.validUntil) all.push(Date.parse(fact.validUntil));
    }
  }
  return fitDomain(all, instants.now.getTime());
}

/**
 * The timeline of statements beside the details of the fact under the pointer or the
 * focus; following a fact's "superseded by" link selects, scrolls to and focuses its
 * successor, asking the page for it (`onNeedFact`) when it is not among the loaded facts.
 */
export function Timeline({
  dataset,
  statements,
  instants,
  hasMore = false,
  loadingMore = false,
  onLoadMore,
  onNeedFact,
  stale = false,
}: {
  dataset: string;
  statements: Statement[];
  instants: TimelineInstants;
  hasMore?: boolean;
  loadingMore?: boolean;
  onLoadMore?: () => void;
  /** Fetches a fact that is not loaded (by id), so a link to it can open it. */
  onNeedFact?: (factId: string) => void;
  /** The facts shown answer the previous instants: the new answer is on its way. */
  stale?: boolean;
}) {
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [focusId, setFocusId] = useState<string | null>(null);
  const detailsRef = useRef<HTMLElement>(null);
  const onSelect = useCallback((fact: TimelineFactFragment) => setSelectedId(fact.factId), []);
  // Enter or a click on a bar: its details, with the focus in them (the links come next).
  const onOpen = useCallback((fact: TimelineFactFragment) => {
    setSelectedId(fact.factId);
    requestAnimationFrame(() => detailsRef.current?.focus());
  }, []);
  const onFocused = useCallback(() => setFocusId(null), []);
  const loaded = useMemo(() => statements.flatMap((row) => row.facts), [statements]);
  const selected = useMemo(
    () => loaded.find((f) => f.factId === selectedId) ?? null,
    [loaded, selectedId],
  );
  return (
    <div className={`with-details${stale ? ' stale' : ''}`}>
      <TimelineRows
        statements={statements}
        instants={instants}
        selectedId={selectedId}
        onSelect={onSelect}
        onOpen={onOpen}
        hasMore={hasMore}
        loadingMore={loadingMore}
        onLoadMore={onLoadMore ?? noMore}
        focusId={focusId}
        onFocused={onFocused}
      />
      <FactDetails
        ref={detailsRef}
        dataset={dataset}
        fact={selected}
        onClose={() => selectedId && document.getElementById(barId(selectedId))?.focus()}
        onFollow={(factId) => {
          setSelectedId(factId);
          setFocusId(factId);
          if (!loaded.some((f) => f.factId === factId)) onNeedFact?.(factId);
        }}
      />
    </div>
  );
}

const noMore = () => {};

/**
 * The zoom of the time axis (d3-zoom): the wheel over the axis (or with Ctrl / ⌘ over the
 * rows, whose plain wheel scrolls them), a drag, two fingers, the toolbar's buttons and the
 * axis's keys all move one transform, which rescales the axis and every bar.
 */
function useTimeZoom(
  frame: React.RefObject<HTMLDivElement | null>,
  lane: { left: number; width: number },
) {
  const [transform, setTransform] = useState<ZoomTransform>(zoomIdentity);
  const behavior = useMemo(
    () =>
      zoom<HTMLDivElement, unknown>()
        .scaleExtent([1 / 64, 100_000])
        .clickDistance(4)
        .filter((event: Event) => {
          const target = event.target instanceof Element ? event.target : null;
          const onAxis = Boolean(target?.closest('.timeline-axis'));
          if (target?.closest('.timeline-toolbar, .load-more')) return false;
          if (event.type === 'wheel') {
            const wheel = event as WheelEvent;
            return onAxis || wheel.ctrlKey || wheel.metaKey;
          }
          if (event.type === 'dblclick') return onAxis;
          // One finger over the rows scrolls them; two fingers zoom.
          if (event.type === 'touchstart')
            return onAxis || (event as TouchEvent).touches.length > 1;
          return (event as MouseEvent).button === 0;
        })
        .on('zoom', (event: { transform: ZoomTransform }) => setTransform(event.transform)),
    [],
  );
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const selection = select(element);
    selection.call(behavior);
    return () => {
      selection.on('.zoom', null);
    };
  }, [frame, behavior]);
  // Buttons and keys zoom about the middle of the lanes.
  useEffect(() => {
    behavior.extent([
      [lane.left, 0],
      [lane.left + Math.max(lane.width, 1), 1],
    ]);
  }, [behavior, lane.left, lane.width]);
  const act = useCallback(
    (
      change: (
        b: ZoomBehavior<HTMLDivElement, unknown>,
        s: ReturnType<typeof select<HTMLDivElement, unknown>>,
      ) => void,
    ) => {
      if (frame.current) change(behavior, select(frame.current));
    },
    [behavior, frame],
  );
  return {
    transform,
    zoomBy: (k: number) => act((b, s) => b.scaleBy(s, k)),
    moveBy: (fraction: number) =>
      act((b, s) => b.translateBy(s, (-fraction * lane.width) / transform.k, 0)),
    fit: () => act((b, s) => b.transform(s, zoomIdentity)),
  };
}

/**
 * The rows: one per subject + predicate, each fact a bar across valid time (validAt →
 * validUntil, or to the edge when open), coloured by its state at the chosen instants,
 * its label inside the bar or beside it. Rows are virtualised (only those in view are in
 * the page), so tens of thousands of facts scroll smoothly; reaching the end asks for the
 * next page.
 */
function TimelineRows({
  statements,
  instants,
  selectedId,
  onSelect,
  onOpen,
  hasMore,
  loadingMore,
  onLoadMore,
  focusId,
  onFocused,
}: {
  statements: Statement[];
  instants: TimelineInstants;
  selectedId: string | null;
  onSelect: (fact: TimelineFactFragment) => void;
  onOpen: (fact: TimelineFactFragment) => void;
  hasMore: boolean;
  loadingMore: boolean;
  onLoadMore: () => void;
  /** A fact to scroll to and focus once (a followed supersession link). */
  focusId: string | null;
  onFocused: () => void;
}) {
  const frameRef = useRef<HTMLDivElement>(null);
  const laneRef = useRef<HTMLDivElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const [lane, setLane] = useState({ left: 0, width: 0 });
  // The lanes' place in the frame (the zoom's coordinates) and width, kept as it resizes.
  useLayoutEffect(() => {
    const measure = () => {
      const frame = frameRef.current?.getBoundingClientRect();
      const axis = laneRef.current?.getBoundingClientRect();
      if (frame && axis) setLane({ left: axis.left - frame.left, width: axis.width });
    };
    measure();
    const observer = new ResizeObserver(measure);
    if (frameRef.current) observer.observe(frameRef.current);
    if (laneRef.current) observer.observe(laneRef.current);
    return () => observer.disconnect();
  }, []);

  const zoomer = useTimeZoom(frameRef, lane);
  // Kept while the instants are the same instants (pages pass a new object each render).
  const nowMs = instants.now.getTime();
  const validAtMs = instants.validAt?.getTime() ?? null;
  const knownAtMs = instants.knownAt?.getTime() ?? null;
  const axisInstants = useMemo(
    () => ({
      now: new Date(nowMs),
      validAt: validAtMs === null ? null : new Date(validAtMs),
      knownAt: knownAtMs === null ? null : new Date(knownAtMs),
    }),
    [nowMs, validAtMs, knownAtMs],
  );
  const domain = useMemo(() => domainOf(statements, axisInstants), [statements, axisInstants]);
  const view: ScaleTime<number, number> = useMemo(() => {
    const base = scaleUtc()
      .domain(domain)
      .range([lane.left, lane.left + Math.max(lane.width, 1)]);
    return zoomer.transform.rescaleX(base);
  }, [domain, lane, zoomer.transform]);
  /** An instant's x in the lanes (pixels from their left edge). */
  const xOf = useCallback((at: Date) => view(at) - lane.left, [view, lane.left]);
  const [viewStart, viewEnd] = view.domain() as [Date, Date];

  const tickCount = Math.max(2, Math.floor(lane.width / TICK_SPACING));
  const ticks = lane.width > 0 ? view.ticks(tickCount) : [];
  const tickFormat = view.tickFormat(tickCount);
  const markers = useMemo(
    () =>
      lane.width > 0
        ? placeMarkers(
            [
              { id: 'now', label: 'now', at: axisInstants.now },
              ...(axisInstants.validAt
                ? [{ id: 'true-at', label: 'true at', at: axisInstants.validAt }]
                : []),
              ...(axisInstants.knownAt
                ? [{ id: 'known-at', label: 'known at', at: axisInstants.knownAt }]
                : []),
            ].map((m) => ({ ...m, label: `${m.label} ${formatDay(m.at.toISOString())}` })),
            xOf,
            lane.width,
            (text) => textWidth(text, MARKER_FONT),
          )
        : [],
    [axisInstants, xOf, lane.width],
  );

  const virtualizer = useVirtualizer({
    count: statements.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => rowHeight(statements[index]!),
    overscan: 6,
    getItemKey: (index) => statements[index]!.key,
  });
  const items = virtualizer.getVirtualItems();
  const last = items[items.length - 1];

  // Near the end of what is loaded: ask for the next page.
  useEffect(() => {
    if (last && hasMore && !loadingMore && last.index >= statements.length - 8) onLoadMore();
  }, [last, hasMore, loadingMore, statements.length, onLoadMore]);

  // Following a link: bring the fact's row into view (and its time, if the view is
  // elsewhere), then focus its bar. A fact not loaded yet is waited for.
  useEffect(() => {
    if (!focusId) return;
    const index = statements.findIndex((row) => row.facts.some((f) => f.factId === focusId));
    if (index < 0) return;
    virtualizer.scrollToIndex(index, { align: 'center' });
    const timer = window.setTimeout(() => {
      document.getElementById(barId(focusId))?.focus();
      onFocused();
    }, 50);
    return () => window.clearTimeout(timer);
  }, [focusId, statements, virtualizer, onFocused]);

  const onAxisKey = (event: KeyboardEvent<HTMLDivElement>) => {
    const actions: Record<string, () => void> = {
      '+': () => zoomer.zoomBy(ZOOM_STEP),
      '=': () => zoomer.zoomBy(ZOOM_STEP),
      '-': () => zoomer.zoomBy(1 / ZOOM_STEP),
      ArrowLeft: () => zoomer.moveBy(-MOVE_STEP),
      ArrowRight: () => zoomer.moveBy(MOVE_STEP),
      '0': () => zoomer.fit(),
      Home: () => zoomer.fit(),
    };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  };

  return (
    <div className="timeline" ref={frameRef}>
      <div className="timeline-toolbar" role="toolbar" aria-label="Time axis controls">
        <button type="button" onClick={() => zoomer.zoomBy(ZOOM_STEP)} aria-label="Zoom in">
          +
        </button>
        <button type="button" onClick={() => zoomer.zoomBy(1 / ZOOM_STEP)} aria-label="Zoom out">
          −
        </button>
        <button type="button" onClick={() => zoomer.moveBy(-MOVE_STEP)} aria-label="Earlier">
          ←
        </button>
        <button type="button" onClick={() => zoomer.moveBy(MOVE_STEP)} aria-label="Later">
          →
        </button>
        <button type="button" onClick={() => zoomer.fit()}>
          Fit
        </button>
        <output className="view-range" data-testid="view-range" aria-live="polite">
          {formatDay(viewStart.toISOString())} – {formatDay(viewEnd.toISOString())}
        </output>
      </div>
      <div className="timeline-axis">
        <div className="axis-label">Statement</div>
        <div
          className="axis-lane"
          ref={laneRef}
          // The axis is a slider over time: ← and → move the view, + and − zoom it.
          tabIndex={0}
          role="slider"
          aria-orientation="horizontal"
          aria-label="Time axis: ← and → move, + and − zoom, 0 fits the facts; the wheel zooms here"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={viewMiddle(domain, viewStart, viewEnd)}
          aria-valuetext={`from ${formatDay(viewStart.toISOString())} to ${formatDay(viewEnd.toISOString())}`}
          data-testid="time-axis"
          data-view-start={viewStart.toISOString()}
          data-view-end={viewEnd.toISOString()}
          onKeyDown={onAxisKey}
          // A row per marker label that would cover another, then the ticks' row.
          style={{ height: (Math.max(0, ...markers.map((m) => m.row)) + 1) * MARKER_ROW + 22 }}
        >
          <div className="axis-markers">
            {markers.map((m) => (
              <span
                key={m.id}
                className={`axis-marker marker-${m.id}${m.edge ? ` at-${m.edge}` : ''}`}
                data-marker={m.id}
                data-edge={m.edge ?? ''}
                style={{ left: m.labelLeft, width: m.labelWidth, top: m.row * MARKER_ROW }}
                title={formatInstant(m.at.toISOString())}
              >
                {m.label}
              </span>
            ))}
          </div>
          <div className="axis-ticks" aria-hidden="true">
            {ticks.map((tick) => (
              <span key={tick.getTime()} className="tick" style={{ left: xOf(tick) }}>
                {tickFormat(tick)}
              </span>
            ))}
          </div>
        </div>
      </div>
      <div ref={scrollRef} className="timeline-scroll" data-testid="timeline">
        <ul
          className="statements"
          aria-label="Statements and their facts over valid time"
          style={{ height: virtualizer.getTotalSize() }}
        >
          {items.map((item) => {
            const row = statements[item.index]!;
            return (
              <li
                key={item.key}
                className="statement"
                data-statement={`${row.subject} / ${row.predicate}`}
                style={{ transform: `translateY(${item.start}px)`, height: item.size }}
              >
                <div className="statement-label" title={`${row.subject} ${row.predicate}`}>
                  <span className="subject">{row.subject}</span>{' '}
                  <span className="predicate">{row.predicate}</span>
                </div>
                <div className="statement-lanes">
                  {markers
                    .filter((m) => m.x !== null)
                    .map((m) => (
                      <span
                        key={m.id}
                        className={`marker-line marker-${m.id}`}
                        style={{ left: m.x ?? 0 }}
                      />
                    ))}
                  {row.facts.map((fact, laneIndex) => (
                    <FactBar
                      key={fact.factId}
                      fact={fact}
                      lane={laneIndex}
                      laneWidth={lane.width}
                      left={xOf(new Date(fact.validAt))}
                      right={fact.validUntil ? xOf(new Date(fact.validUntil)) : null}
                      selected={fact.factId === selectedId}
                      onSelect={onSelect}
                      onOpen={onOpen}
                    />
                  ))}
                </div>
              </li>
            );
          })}
        </ul>
      </div>
      {hasMore && (
        <button type="button" className="load-more" onClick={onLoadMore} disabled={loadingMore}>
          {loadingMore ? 'Loading more facts…' : 'Load more facts'}
        </button>
      )}
    </div>
  );
}

/** Where the view's middle lies in the fitted span, in percent (the slider's value). */
function viewMiddle(domain: [Date, Date], start: Date, end: Date): number {
  const span = domain[1].getTime() - domain[0].getTime() || 1;
  const middle = (start.getTime() + end.getTime()) / 2;
  return Math.round(Math.min(Math.max(((middle - domain[0].getTime()) / span) * 100, 0), 100));
}

function barId(factId: string): string {
  return `fact-${factId}`;
}

/**
 * One fact: a bar over its valid time in the view, or, when all of it lies outside the
 * view, a mark at the edge it lies beyond (with its date). Its label stays readable: in
 * the bar when it fits, beside it otherwise; the bar itself is announced with the whole
 * statement, its state and its dates.
 */
function FactBar({
  fact,
  lane,
  laneWidth,
  left,
  right,
  selected,
  onSelect,
  onOpen,
}: {
  fact: TimelineFactFragment;
  lane: number;
  laneWidth: number;
  /** validAt's x, and validUntil's (null: open, to the lane's end). */
  left: number;
  right: number | null;
  selected: boolean;
  onSelect: (fact: TimelineFactFragment) => void;
  onOpen: (fact: TimelineFactFragment) => void;
}) {
  const look = lookOf(fact);
  const until = fact.validUntil ? formatDay(fact.validUntil) : 'open';
  const successor = look === 'superseded' && fact.supersededBy;
  const end = right ?? laneWidth;
  const beyond = left > laneWidth ? 'end' : end < 0 ? 'start' : null;
  const barLeft =
    beyond === 'end' ? laneWidth - EDGE_MARK : beyond === 'start' ? 0 : Math.max(left, -2);
  const barRight =
    beyond === 'end'
      ? laneWidth
      : beyond === 'start'
        ? EDGE_MARK
        : Math.max(Math.min(end, laneWidth + 2), barLeft + MIN_BAR);
  const statement = `${fact.object}${successor ? ` → ${fact.supersededBy?.object}` : ''}`;
  const text =
    beyond === 'end'
      ? `${statement} · ${formatDay(fact.validAt)}`
      : beyond === 'start'
        ? `${statement} · until ${until}`
        : statement;
  const place = labelPlace(
    { left: barLeft, right: barRight },
    textWidth(text, BAR_FONT) + 12,
    laneWidth,
  );
  const top = LABEL_HEIGHT + lane * LANE_HEIGHT;
  return (
    <>
      <button
        type="button"
        id={barId(fact.factId)}
        className={`bar look-${look}${right === null ? ' open' : ''}${selected ? ' selected' : ''}${beyond ? ` beyond beyond-${beyond}` : ''}`}
        data-fact-id={fact.factId}
        data-look={look}
        data-beyond={beyond ?? ''}
        style={{ left: barLeft, width: barRight - barLeft, top }}
        aria-label={`${fact.subject} ${fact.predicate} ${fact.object}: ${LOOK_LABEL[look]}, valid ${formatDay(fact.validAt)} to ${until}${successor ? `, superseded by ${fact.supersededBy?.object}` : ''}`}
        title={`${fact.subject} ${fact.predicate} ${text}`}
        onMouseEnter={() => onSelect(fact)}
        onFocus={() => onSelect(fact)}
        onClick={() => onOpen(fact)}
      >
        {beyond === 'end' ? '→' : beyond === 'start' ? '←' : ''}
      </button>
      <span
        className={`bar-label${place.inside ? ` on-${look}` : ''}`}
        data-label-for={fact.factId}
        aria-hidden="true"
        style={{ left: place.left, maxWidth: place.width, top }}
      >
        {text}
      </span>
    </>
  );
}
