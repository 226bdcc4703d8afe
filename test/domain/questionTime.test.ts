import { describe, expect, it } from 'vitest';
import { timeInQuestion } from '../../src/domain/questionTime.js';

/** The time a recall question names, as a window on valid time (domain/questionTime.ts). */

const AT = new Date('2026-12-01T12:00:00Z');
const window = (question: string, at = AT) => {
  const { time, words } = timeInQuestion(question, at);
  return time
    ? {
        phrase: time.phrase,
        from: time.from?.toISOString().slice(0, 10) ?? null,
        until: time.until?.toISOString().slice(0, 10) ?? null,
        words: words.trim().replace(/\s+/g, ' '),
      }
    : null;
};

describe('timeInQuestion', () => {
  it.each([
    [
      'where did the user live in 2025',
      'in 2025',
      '2025-01-01',
      '2026-01-01',
      'where did the user live',
    ],
    ['what car in august 2026', 'in august 2026', '2026-08-01', '2026-09-01', 'what car'],
    [
      'what did the user drive last week',
      'last week',
      '2026-11-24',
      '2026-12-01',
      'what did the user drive',
    ],
    ['what did they eat yesterday', 'yesterday', '2026-11-30', '2026-12-01', 'what did they eat'],
    [
      'what was planned three months ago',
      'three months ago',
      '2026-09-01',
      '2026-10-01',
      'what was planned',
    ],
    [
      'who did the user meet on 2026-05-10',
      'on 2026-05-10',
      '2026-05-10',
      '2026-05-11',
      'who did the user meet',
    ],
    ['what changed since March 2026', 'since March 2026', '2026-03-01', null, 'what changed'],
    ['what changed after 2024', 'after 2024', '2025-01-01', null, 'what changed'],
    [
      'where did they live before June 2026',
      'before June 2026',
      null,
      '2026-06-01',
      'where did they live',
    ],
    ['jobs between 2024 and 2025', 'between 2024 and 2025', '2024-01-01', '2026-01-01', 'jobs'],
    [
      'cars between May and August 2026',
      'between May and August 2026',
      '2026-05-01',
      '2026-09-01',
      'cars',
    ],
    [
      'cars between April 2026 and August 2026',
      'between April 2026 and August 2026',
      '2026-04-01',
      '2026-09-01',
      'cars',
    ],
    ['trips from May to June 2026', 'from May to June 2026', '2026-05-01', '2026-07-01', 'trips'],
  ])('%s', (question, phrase, from, until, words) => {
    expect(window(question)).toEqual({ phrase, from, until, words });
  });

  it('a month without a year is the last one, not the next', () => {
    expect(window('what happened in May')).toMatchObject({
      from: '2026-05-01',
      until: '2026-06-01',
    });
    expect(window('what happened in May', new Date('2026-05-20T00:00:00Z'))).toMatchObject({
      from: '2026-05-01',
    });
  });

  it('reads relative phrases from the instant given (a replay reads them from its knownAt)', () => {
    expect(window('yesterday', new Date('2026-06-15T09:00:00Z'))).toMatchObject({
      from: '2026-06-14',
      until: '2026-06-15',
    });
  });

  it('a weekday is the last one', () => {
    expect(window('is the user free on friday')).toMatchObject({
      phrase: 'on friday',
      from: '2026-11-27',
      until: '2026-11-28',
    });
    expect(window('what changed since Monday')).toMatchObject({ from: '2026-11-30', until: null });
  });

  it.each([
    'does the user march',
    'the user likes sunday roast',
    'what may the user like',
    'what does the user do now',
    'the user works at 5',
    'what happened at noon',
    'what did the user eat in the morning',
  ])('names no time: %s', (question) => {
    expect(timeInQuestion(question, AT)).toEqual({ time: null, words: question });
  });

  it('a number alone is not a year, and a question without time has none', () => {
    expect(timeInQuestion('the 2000 euros budget', AT)).toEqual({
      time: null,
      words: 'the 2000 euros budget',
    });
    expect(timeInQuestion('what does the user drive?', AT).time).toBeNull();
  });
});
