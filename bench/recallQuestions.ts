/**
 * The labelled question set of `npm run bench:recall` (bench/recallQuality.ts): one user's
 * conversations over three years, fourteen sessions written through `recordEpisode` at the
 * time they happened (what changed is recorded later, replacing what it replaces), and
 * questions an agent asks about them on 1 December 2026, each labelled with the facts that
 * answer it (by `subject | predicate | object`) and a category.
 */

export const QUALITY_NOW = '2026-12-01T12:00:00.000Z';

export interface SessionFact {
  key: string;
  quote: string | null;
  /** Valid from (default: the session's time). */
  validAt?: string;
  validUntil?: string;
  /** Ends the facts of the same subject and predicate (a knowledge update). */
  replaceExisting?: boolean;
  objectIsEntity?: boolean;
}

export interface Session {
  at: string;
  content: string;
  entities: { name: string; type: 'PERSON' | 'ORG' | 'PLACE' | 'PRODUCT' | 'THING' }[];
  facts: SessionFact[];
}

const fact = (
  key: string,
  quote: string | null,
  more: Omit<SessionFact, 'key' | 'quote'> = {},
) => ({
  key,
  quote,
  ...more,
});

export const SESSIONS: Session[] = [
  {
    at: '2024-02-10T18:00:00Z',
    content:
      'user: I live in Lisbon and work as a nurse at Santa Maria hospital. My sister Ana lives in Porto.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'ana', type: 'PERSON' },
      { name: 'lisbon', type: 'PLACE' },
      { name: 'porto', type: 'PLACE' },
      { name: 'santa maria hospital', type: 'ORG' },
    ],
    facts: [
      fact('user | lives in | lisbon', 'I live in Lisbon', { objectIsEntity: true }),
      fact('user | works as | nurse', 'I work as a nurse'),
      fact('user | works at | santa maria hospital', 'at Santa Maria hospital', {
        objectIsEntity: true,
      }),
      fact('ana | is sister of | user', 'My sister Ana', { objectIsEntity: true }),
      fact('ana | lives in | porto', 'Ana lives in Porto', { objectIsEntity: true }),
    ],
  },
  {
    at: '2024-04-02T08:30:00Z',
    content:
      "user: careful with snacks, I'm allergic to peanuts and carry an epipen. I have matcha every morning. Coriander tastes like soap to me.",
    entities: [{ name: 'user', type: 'PERSON' }],
    facts: [
      fact('user | is allergic to | peanuts', "I'm allergic to peanuts and carry an epipen"),
      fact('user | drinks | green tea', 'I have matcha every morning'),
      fact('user | dislikes | cilantro', 'Coriander tastes like soap to me'),
    ],
  },
  {
    at: '2024-06-15T10:00:00Z',
    content: 'user: we adopted a tabby kitten, she is called Pixel.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'pixel', type: 'THING' },
    ],
    facts: [
      fact('user | has a cat named | pixel', 'we adopted a tabby kitten', { objectIsEntity: true }),
    ],
  },
  {
    at: '2024-09-20T19:00:00Z',
    content:
      'user: I started evening classes at the language school for Japanese; we plan a trip to Kyoto in spring.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'kyoto', type: 'PLACE' },
    ],
    facts: [
      fact('user | studies | japanese', 'I started evening classes at the language school'),
      fact('user | plans a trip to | kyoto', 'we plan a trip to Kyoto in spring', {
        validUntil: '2025-05-01T00:00:00Z',
        objectIsEntity: true,
      }),
    ],
  },
  {
    at: '2025-01-12T12:00:00Z',
    content: 'user: we finally moved to Berlin, I have a new job at the Charité.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'berlin', type: 'PLACE' },
      { name: 'charite hospital', type: 'ORG' },
    ],
    facts: [
      fact('user | lives in | berlin', 'we finally moved to Berlin', {
        replaceExisting: true,
        objectIsEntity: true,
      }),
      fact('user | works at | charite hospital', 'a new job at the Charité', {
        replaceExisting: true,
        objectIsEntity: true,
      }),
    ],
  },
  {
    at: '2025-03-03T16:00:00Z',
    content: 'user: picked up a secondhand VW today, a Golf.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'volkswagen golf', type: 'PRODUCT' },
    ],
    facts: [
      fact('user | owns | volkswagen golf', 'picked up a secondhand VW today', {
        objectIsEntity: true,
      }),
    ],
  },
  {
    at: '2025-05-18T20:00:00Z',
    content: 'user: Kyoto was amazing, the torii gates at Fushimi Inari at dawn!',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'kyoto', type: 'PLACE' },
      { name: 'fushimi inari shrine', type: 'PLACE' },
    ],
    facts: [
      fact('user | visited | kyoto', 'Kyoto was amazing', {
        validAt: '2025-04-20T00:00:00Z',
        objectIsEntity: true,
      }),
      fact('user | visited | fushimi inari shrine', 'the torii gates at Fushimi Inari at dawn', {
        validAt: '2025-04-22T00:00:00Z',
        objectIsEntity: true,
      }),
    ],
  },
  {
    at: '2025-08-09T07:00:00Z',
    content:
      'user: training four times a week for the October half, with the Tempelhof running club.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'tempelhof running club', type: 'ORG' },
    ],
    facts: [
      fact('user | trains for | half marathon', 'training four times a week for the October half'),
      fact('user | is a member of | tempelhof running club', 'with the Tempelhof running club', {
        objectIsEntity: true,
      }),
    ],
  },
  {
    at: '2025-10-26T14:00:00Z',
    content: 'user: crossed the line in 1:58, so happy!',
    entities: [{ name: 'user', type: 'PERSON' }],
    facts: [fact('user | finished | berlin half marathon', 'crossed the line in 1:58')],
  },
  {
    at: '2026-01-15T17:00:00Z',
    content: 'user: big news, they promoted me to head nurse.',
    entities: [{ name: 'user', type: 'PERSON' }],
    facts: [
      fact('user | works as | head nurse', 'they promoted me to head nurse', {
        replaceExisting: true,
      }),
    ],
  },
  {
    at: '2026-03-22T09:00:00Z',
    content: 'user: my sister had a baby boy, Leo! I am an aunt.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'ana', type: 'PERSON' },
      { name: 'leo', type: 'PERSON' },
    ],
    facts: [
      fact('ana | has a son named | leo', 'my sister had a baby boy', { objectIsEntity: true }),
      fact('user | is the aunt of | leo', 'I am an aunt', { objectIsEntity: true }),
    ],
  },
  {
    at: '2026-05-30T11:00:00Z',
    content: 'user: I sold the Golf, I bike everywhere now.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'volkswagen golf', type: 'PRODUCT' },
    ],
    facts: [
      fact('user | owns | bicycle', 'I bike everywhere now', { replaceExisting: true }),
      fact('user | sold | volkswagen golf', 'I sold the Golf', { objectIsEntity: true }),
    ],
  },
  {
    at: '2026-08-14T08:00:00Z',
    content: 'user: gave up matcha, black coffee now.',
    entities: [{ name: 'user', type: 'PERSON' }],
    facts: [
      fact('user | drinks | black coffee', 'gave up matcha, black coffee now', {
        replaceExisting: true,
      }),
    ],
  },
  {
    at: '2026-10-05T18:00:00Z',
    content: 'user: we are thinking of moving to Hamburg next year.',
    entities: [
      { name: 'user', type: 'PERSON' },
      { name: 'hamburg', type: 'PLACE' },
    ],
    facts: [
      fact('user | plans to move to | hamburg', 'thinking of moving to Hamburg next year', {
        objectIsEntity: true,
      }),
    ],
  },
];

export const CATEGORIES = [
  'single fact',
  'several sessions',
  'knowledge update',
  'temporal',
  'typo',
  'quote only',
  'nothing relevant',
  // Held out: bench/recallParaphrases.ts.
  'paraphrase',
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface LabelledQuestion {
  category: Category;
  question: string;
  /**
   * The statements that answer it (any version of one: a corrected version, ended where a
   * later fact replaced it, is the same statement); empty: nothing relevant is the answer.
   */
  answers: string[];
}

const q = (category: Category, question: string, ...answers: string[]): LabelledQuestion => ({
  category,
  question,
  answers,
});

export const QUESTIONS: LabelledQuestion[] = [
  q('single fact', 'what is the user allergic to', 'user | is allergic to | peanuts'),
  q('single fact', "what is the name of the user's cat", 'user | has a cat named | pixel'),
  q('single fact', 'which language is the user studying', 'user | studies | japanese'),
  q('single fact', 'who is ana', 'ana | is sister of | user'),
  q('single fact', 'where does ana live', 'ana | lives in | porto'),
  q('single fact', 'what food does the user dislike', 'user | dislikes | cilantro'),
  q('single fact', 'which shrine did the user visit', 'user | visited | fushimi inari shrine'),
  q(
    'single fact',
    'which running club is the user in',
    'user | is a member of | tempelhof running club',
  ),
  q('single fact', "what is the name of ana's son", 'ana | has a son named | leo'),
  q('single fact', 'where is the user planning to move', 'user | plans to move to | hamburg'),
  q('single fact', 'does the user own a bicycle', 'user | owns | bicycle'),
  q('single fact', 'whose aunt is the user', 'user | is the aunt of | leo'),

  q(
    'several sessions',
    "how did the user's half marathon go",
    'user | trains for | half marathon',
    'user | finished | berlin half marathon',
  ),
  q(
    'several sessions',
    'tell me about ana and her family',
    'ana | is sister of | user',
    'ana | lives in | porto',
    'ana | has a son named | leo',
  ),
  q(
    'several sessions',
    'what is the user doing about running',
    'user | trains for | half marathon',
    'user | is a member of | tempelhof running club',
    'user | finished | berlin half marathon',
  ),
  q(
    'several sessions',
    'what does the user do at work and where',
    'user | works as | head nurse',
    'user | works at | charite hospital',
  ),
  q(
    'several sessions',
    'japan: what is the user learning and where did they go',
    'user | studies | japanese',
    'user | visited | kyoto',
  ),
  q('several sessions', 'what happened with the volkswagen golf', 'user | sold | volkswagen golf'),
  q(
    'several sessions',
    'what should I know about leo',
    'ana | has a son named | leo',
    'user | is the aunt of | leo',
  ),
  q(
    'several sessions',
    'which cities matter to the user: berlin, hamburg',
    'user | lives in | berlin',
    'user | plans to move to | hamburg',
  ),

  q('knowledge update', 'where does the user live', 'user | lives in | berlin'),
  q(
    'knowledge update',
    'which hospital does the user work at',
    'user | works at | charite hospital',
  ),
  q('knowledge update', "what is the user's job", 'user | works as | head nurse'),
  q('knowledge update', 'what does the user drink in the morning', 'user | drinks | black coffee'),
  q('knowledge update', 'what does the user own', 'user | owns | bicycle'),
  q('knowledge update', 'which city does the user live in now', 'user | lives in | berlin'),
  q('knowledge update', 'is the user still working as a nurse', 'user | works as | head nurse'),
  q('knowledge update', 'what does the user drink', 'user | drinks | black coffee'),

  q('temporal', 'where did the user live in 2024', 'user | lives in | lisbon'),
  q('temporal', 'where did the user work in 2024', 'user | works at | santa maria hospital'),
  q('temporal', 'what did the user drink in 2025', 'user | drinks | green tea'),
  q('temporal', 'what did the user own in 2025', 'user | owns | volkswagen golf'),
  q('temporal', "what was the user's job in 2025", 'user | works as | nurse'),
  q('temporal', 'which trip did the user plan in October 2024', 'user | plans a trip to | kyoto'),
  q('temporal', 'where did the user live before 2025', 'user | lives in | lisbon'),
  q('temporal', 'what did the user own in March 2026', 'user | owns | volkswagen golf'),

  q('typo', 'what is the user alergic to', 'user | is allergic to | peanuts'),
  q('typo', 'japanse lessons', 'user | studies | japanese'),
  q(
    'typo',
    'how was the marathn',
    'user | trains for | half marathon',
    'user | finished | berlin half marathon',
  ),
  q('typo', 'what happened to the volkswagon', 'user | sold | volkswagen golf'),
  q('typo', 'does the user ride a bicyle', 'user | owns | bicycle'),
  q('typo', 'moving to hambrug', 'user | plans to move to | hamburg'),
  q('typo', 'did the user go to kyotto', 'user | visited | kyoto'),
  q('typo', 'peanutz', 'user | is allergic to | peanuts'),

  q('quote only', 'matcha', 'user | drinks | black coffee'),
  q('quote only', 'tabby kitten', 'user | has a cat named | pixel'),
  q('quote only', 'does the user carry an epipen', 'user | is allergic to | peanuts'),
  q('quote only', 'coriander', 'user | dislikes | cilantro'),
  q('quote only', 'evening classes', 'user | studies | japanese'),
  q('quote only', 'when was the user promoted', 'user | works as | head nurse'),
  q('quote only', 'baby boy', 'ana | has a son named | leo'),
  q('quote only', 'crossed the line', 'user | finished | berlin half marathon'),

  q('nothing relevant', "what is the user's favourite football team"),
  q('nothing relevant', 'does the user play the piano'),
  q('nothing relevant', "what is the user's blood type"),
  q('nothing relevant', 'user'),
  q('nothing relevant', "when is the user's birthday"),
  q('nothing relevant', "what's the weather like today"),
  q('nothing relevant', 'which programming languages does the user know'),
  q('nothing relevant', 'what did the user tell me about the user'),
];
