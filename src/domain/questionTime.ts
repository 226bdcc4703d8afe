import type { ParsedComponents } from 'chrono-node';
// English alone: the package's root loads every locale (about 900 modules, 11 MB more at
// start; docs/PERFORMANCE.md, "Memory"), and the questions are read in English.
import * as chrono from 'chrono-node/en';

/**
 * The time a recall question speaks of ("where did the user live in 2025", "what did they
 * drive last week", "since March"), read by chrono-node, relative to an instant (the
 * request's, or the replay's `knownAt`), in UTC. It becomes a window on valid time: the
 * facts true at any point of it. The phrase, with the preposition that bounds it, then
 * stops counting as words of the question.
 *
 * The window is the phrase's own span at its precision: a year is the year, a month the
 * month, a date the day, "last week" the seven days from the day chrono names. `since`,
 * `from` and `after` open it to the right, `before` and `until` to the left, `between A
 * and B` runs from A to the end of B. A month or day without a year that would fall after
 * the instant is taken in the year before (a question about memory looks back). English
 * only; the first time phrase of the question is read.
 */

/** A window on valid time, [from, until): null is unbounded on that side. */
export interface TimeInQuestion {
  /** The words read as time, as the question wrote them ("in 2025", "since March 2026"). */
  phrase: string;
  from: Date | null;
  until: Date | null;
}

/**
 * chrono-node's English parser, plus a year after a preposition ("in 2025", "since 2024"),
 * which it leaves out by design (a number alone is more often not a year: "2000 euros").
 */
const parser = chrono.casual.clone();
parser.parsers.push({
  pattern: () =>
    /\b(?:in|during|since|from|after|before|until|till|by|of|between|and)\s+((?:19|20)\d{2})\b/i,
  extract: (context, match) => {
    const year = context.createParsingComponents();
    year.assign('year', Number(match[1]));
    year.imply('month', 1);
    year.imply('day', 1);
    return year;
  },
});

type Unit = 'year' | 'month' | 'week' | 'day';

/** The span a parsed date covers: the finest component the phrase names. */
function unitOf(result: chrono.ParsedResult): Unit {
  const known = (c: chrono.Component) => result.start.isCertain(c);
  if (/\bweeks?\b/i.test(result.text)) return 'week';
  if (known('day') || known('weekday')) return 'day';
  if (known('month')) return 'month';
  return 'year';
}

function startOf(date: Date, unit: Unit): Date {
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth();
  if (unit === 'year') return new Date(Date.UTC(y, 0, 1));
  if (unit === 'month') return new Date(Date.UTC(y, m, 1));
  return new Date(Date.UTC(y, m, date.getUTCDate()));
}

function after(start: Date, unit: Unit): Date {
  const d = new Date(start);
  if (unit === 'year') d.setUTCFullYear(d.getUTCFullYear() + 1);
  else if (unit === 'month') d.setUTCMonth(d.getUTCMonth() + 1);
  else d.setUTCDate(d.getUTCDate() + (unit === 'week' ? 7 : 1));
  return d;
}

/**
 * A component's date, looking back: a weekday alone that lies ahead is the one before; a
 * month or day without a year that lies ahead is the year before.
 */
function lookingBack(components: ParsedComponents, reference: Date): Date {
  const date = components.date();
  if (components.isCertain('year') || date.getTime() <= reference.getTime()) return date;
  const earlier = new Date(date);
  if (components.isCertain('weekday') && !components.isCertain('day')) {
    earlier.setUTCDate(earlier.getUTCDate() - 7);
  } else {
    earlier.setUTCFullYear(earlier.getUTCFullYear() - 1);
  }
  return earlier;
}

const NAMES =
  /^(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|saturday|sunday)$/i;
const PREPOSITION =
  /\b(in|on|during|of|since|from|after|before|until|till|by|between|and|last|next|this)\s+$/i;

/**
 * Whether a result names a time a question can mean: a date, month, year or weekday (a
 * time of day alone, "at noon", is no window on facts; "now" is the default), and a month
 * or weekday name alone only after a preposition ("in May", not "does the user march",
 * "sunday roast").
 */
function namesATime(result: chrono.ParsedResult, question: string): boolean {
  const start = result.start;
  const dated = (['year', 'month', 'day', 'weekday'] as const).some((c) => start.isCertain(c));
  if (!dated || /^now$/i.test(result.text.trim())) return false;
  if (NAMES.test(result.text.trim())) return PREPOSITION.test(question.slice(0, result.index));
  return true;
}

const OPENS_RIGHT = /\b(since|from|after)\s+$/i;
const OPENS_LEFT = /\b(before|until|till|by)\s+$/i;
const BETWEEN = /\bbetween\s+$/i;
/** "between <words chrono did not read> and " right before the phrase it did read. */
const BETWEEN_UNREAD = /\bbetween\s+(\S+(?:\s+\S+)?)\s+and\s+$/i;
const IN = /\b(in|during|on|of|at)\s+$/i;

/**
 * The first time phrase of `question` as a window, and the question without it (what is
 * analysed as words); `time` is null when the question names no time.
 */
export function timeInQuestion(
  question: string,
  reference: Date,
): { time: TimeInQuestion | null; words: string } {
  const results = parser
    .parse(question, { instant: reference, timezone: 'UTC' })
    .filter((result) => namesATime(result, question));
  const first = results[0];
  if (!first) return { time: null, words: question };
  // A preposition is before the phrase, or in it (the year parser's).
  const inside = /^(?:since|from|after|before|until|till|by|in|during|on|of|at|between)\s+/i.exec(
    first.text,
  );
  const before = question.slice(0, first.index) + (inside?.[0] ?? '');
  let phraseStart = first.index;
  let phraseEnd = first.index + first.text.length;
  const unit = unitOf(first);
  const start = startOf(lookingBack(first.start, reference), unit);
  let from: Date | null = start;
  let until: Date | null = first.end
    ? after(startOf(lookingBack(first.end, reference), unitOfEnd(first)), unitOfEnd(first))
    : after(start, unit);
  const second = results[1];
  const between = BETWEEN.exec(before);
  if (
    between &&
    second &&
    /^\s*(and\s+)?$/i.test(question.slice(phraseEnd, second.index)) &&
    /^(and\s+)?/i.test(second.text)
  ) {
    // "between May and August 2026": the first's year is the second's when it names none.
    const last = startOf(lookingBack(second.start, reference), unitOf(second));
    until = after(last, unitOf(second));
    if (!first.start.isCertain('year') && second.start.isCertain('year')) {
      from = new Date(start);
      from.setUTCFullYear(last.getUTCFullYear());
      if (from > last) from.setUTCFullYear(last.getUTCFullYear() - 1);
    }
    phraseStart = between.index;
    phraseEnd = second.index + second.text.length;
  } else if (BETWEEN_UNREAD.test(question.slice(0, first.index))) {
    // "between May and August 2026": chrono reads the second only; the first is read on
    // its own, in the second's year when it names none.
    const lead = BETWEEN_UNREAD.exec(question.slice(0, first.index))!;
    const alone = parser.parse(lead[1]!, { instant: reference, timezone: 'UTC' })[0];
    if (alone && !alone.end) {
      const leadUnit = unitOf(alone);
      const begins = startOf(alone.start.date(), leadUnit);
      if (!alone.start.isCertain('year')) {
        begins.setUTCFullYear(start.getUTCFullYear());
        if (begins > start) begins.setUTCFullYear(start.getUTCFullYear() - 1);
      }
      from = begins;
      phraseStart = lead.index;
    }
  } else {
    const opensRight = first.end ? null : OPENS_RIGHT.exec(before);
    const opensLeft = first.end ? null : OPENS_LEFT.exec(before);
    const within = IN.exec(before) ?? /\b(from)\s+$/i.exec(before);
    if (opensRight) {
      // "after March" begins once March is over; "since" and "from" with it.
      if (opensRight[1]!.toLowerCase() === 'after') from = until;
      until = null;
      phraseStart = opensRight.index;
    } else if (opensLeft) {
      until = from;
      from = null;
      phraseStart = opensLeft.index;
    } else if (within) {
      phraseStart = within.index;
    }
  }
  return {
    time: { phrase: question.slice(phraseStart, phraseEnd), from, until },
    words: `${question.slice(0, phraseStart)} ${question.slice(phraseEnd)}`,
  };
}

/** The unit of a range's end ("from May to June 2026": June is a month). */
function unitOfEnd(result: chrono.ParsedResult): Unit {
  const end = result.end!;
  if (end.isCertain('day') || end.isCertain('weekday')) return 'day';
  if (end.isCertain('month')) return 'month';
  return 'year';
}
