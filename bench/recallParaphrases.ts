import type { LabelledQuestion, Session } from './recallQuestions.js';

/**
 * The paraphrased questions of `npm run bench:recall` (docs/PERFORMANCE.md, "Recall by
 * meaning"), written apart from the questions recall's rules were tuned on: each shares no
 * word with the facts that answer it, and a trap fact of TRAP_SESSION shares one with it
 * and means something else. Nothing was tuned on them: they are the held-out test of
 * recall by meaning.
 */

/** Facts that share a word with a paraphrased question, about something else. */
export const TRAP_SESSION: Session = {
  at: '2026-11-02T18:00:00Z',
  content:
    'user: random things: I work from home on fridays, my pet peeve is loud chewing, I rode the ferris wheel at the fair, I start the day with yoga, I admire professional chefs, I like country music, and my neighbour is very kind.',
  entities: [{ name: 'user', type: 'PERSON' }],
  facts: [
    { key: 'user | works from | home on fridays', quote: 'I work from home on fridays' },
    { key: 'user | has a pet peeve about | loud chewing', quote: 'my pet peeve is loud chewing' },
    { key: 'user | rode | the ferris wheel at the fair', quote: 'I rode the ferris wheel' },
    { key: 'user | starts | the day with yoga', quote: 'I start the day with yoga' },
    { key: 'user | admires | professional chefs', quote: 'I admire professional chefs' },
    { key: 'user | likes | country music', quote: 'I like country music' },
    { key: 'user | has | a kind neighbour', quote: 'my neighbour is very kind' },
  ],
};

const p = (question: string, ...answers: string[]): LabelledQuestion => ({
  category: 'paraphrase',
  question,
  answers,
});

export const PARAPHRASES: LabelledQuestion[] = [
  p("where is the user's home", 'user | lives in | berlin'),
  p('what pet does the user have', 'user | has a cat named | pixel'),
  p('what does the user ride to get around', 'user | owns | bicycle'),
  p('which beverage does the user start the day with', 'user | drinks | black coffee'),
  p("what is the user's profession", 'user | works as | head nurse'),
  p('which country did the user travel to', 'user | visited | kyoto'),
  p('what kind of automobile did the user have', 'user | sold | volkswagen golf'),
  p('which nut must the user avoid', 'user | is allergic to | peanuts'),
  p('what herb does the user hate', 'user | dislikes | cilantro'),
  p('has the user got siblings', 'ana | is sister of | user'),
];
