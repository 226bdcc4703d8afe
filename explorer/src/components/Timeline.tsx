import { useVirtualizer } from '@tanstack/react-virtual';
import { scaleUtc } from 'd3-scale';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { TimelineFactFragment } from '../generated/operations.ts';
import { formatDay } from '../instants.ts';
import { LOOK_LABEL, lookOf, type Statement } from '../statements.ts';
import { FactDetails } from './FactDetails.tsx';

const LABEL_HEIGHT = 22;
const LANE_HEIGHT = 26;
const ROW_PADDING = 10;

function rowHeight(statement: Statement): number {
  return LABEL_HEIGHT + statement.facts.length * LANE_HEIGHT + ROW_PADDING;
}

/** The span of valid time the timeline draws: every loaded fact, the chosen instant, now. */
function validTimeDomain(statements: readonly Statement[], trueAt: Date): [Date, Date] {
  let min = trueAt.getTime();
  let max = trueAt.getTime();
  for (const row of statements) {
    for (const fact of row.facts) {
      min = Math.min(min, Date.parse(fact.validAt));
      max = Math.max(max, Date.parse(fact.validAt));
      if (fact.validUntil) max = Math.max(max, Date.parse(fact.validUntil));
    }
  }
  const pad = Math.max((max - min) * 0.06, 86_400_000);
  return [new Date(min - pad), new Date(max + pad)];
}

/**
 * The timeline of statements beside the details of the fact under the pointer or the
 * focus; following a fact's "superseded by" link selects, scrolls to and focuses its
 * successor.
 */
export function Timeline({
  dataset,
  statements,
  trueAt,
  hasMore = false,
  loadingMore = false,
  onLoadMore,
  stale = false,
}: {
  dataset: string;
  statements: Statement[];
  trueAt: Date;
  hasMore?: boolean;
  loadingMore?: boolean;
  onLoadMore?: () => void;
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
  const selected = useMemo(
    () => statements.flatMap((row) => row.facts).find((f) => f.factId === selectedId) ?? null,
    [statements, selectedId],
  );
  return (
    <div className={`with-details${stale ? ' stale' : ''}`}>
      <TimelineRows
        statements={statements}
        trueAt={trueAt}
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
        }}
      />
    </div>
  );
}

const noMore = () => {};

/**
 * The rows: one per subject + predicate, each fact a bar across valid time (validAt →
 * validUntil, or to the edge when open), coloured by its state at the chosen instants.
 * Rows are virtualised (only those in view are in the page), so tens of thousands of
 * facts scroll smoothly; reaching the end asks for the next page.
 */
function TimelineRows({
  statements,
  trueAt,
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
  trueAt: Date;
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
  const scrollRef = useRef<HTMLDivElement>(null);
  const scale = useMemo(
    () => scaleUtc().domain(validTimeDomain(statements, trueAt)).range([0, 100]).clamp(true),
    [statements, trueAt],
  );
  const ticks = scale.ticks(6);
  const tickFormat = scale.tickFormat(6);

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

  // Following a link: bring the fact's row into view, then focus its bar.
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

  const trueAtX = scale(trueAt);
  return (
    <div className="timeline">
      <div className="timeline-axis" aria-hidden="true">
        <div className="axis-label">Statement</div>
        <div className="axis-lane">
          {ticks.map((tick) => (
            <span key={tick.getTime()} className="tick" style={{ left: `${scale(tick)}%` }}>
              {tickFormat(tick)}
            </span>
          ))}
          <span className="true-at-flag" style={{ left: `${trueAtX}%` }}>
            true at
          </span>
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
                  <span className="true-at-line" style={{ left: `${trueAtX}%` }} />
                  {row.facts.map((fact, lane) => (
                    <FactBar
                      key={fact.factId}
                      fact={fact}
                      lane={lane}
                      left={scale(new Date(fact.validAt))}
                      right={fact.validUntil ? scale(new Date(fact.validUntil)) : 100}
                      open={!fact.validUntil}
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

function barId(factId: string): string {
  return `fact-${factId}`;
}

function FactBar({
  fact,
  lane,
  left,
  right,
  open,
  selected,
  onSelect,
  onOpen,
}: {
  fact: TimelineFactFragment;
  lane: number;
  left: number;
  right: number;
  open: boolean;
  selected: boolean;
  onSelect: (fact: TimelineFactFragment) => void;
  onOpen: (fact: TimelineFactFragment) => void;
}) {
  const look = lookOf(fact);
  const until = fact.validUntil ? formatDay(fact.validUntil) : 'open';
  const successor = look === 'superseded' && fact.supersededBy;
  return (
    <button
      type="button"
      id={barId(fact.factId)}
      className={`bar look-${look}${open ? ' open' : ''}${selected ? ' selected' : ''}`}
      data-fact-id={fact.factId}
      data-look={look}
      style={{
        left: `${left}%`,
        width: `max(${Math.max(right - left, 0)}%, 4px)`,
        top: LABEL_HEIGHT + lane * LANE_HEIGHT,
      }}
      aria-label={`${fact.subject} ${fact.predicate} ${fact.object}: ${LOOK_LABEL[look]}, valid ${formatDay(fact.validAt)} to ${until}`}
      onMouseEnter={() => onSelect(fact)}
      onFocus={() => onSelect(fact)}
      onClick={() => onOpen(fact)}
    >
      <span className="bar-text">
        {fact.object}
        {successor ? ` → ${fact.supersededBy?.object}` : ''}
      </span>
    </button>
  );
}
