import { readFileSync } from 'node:fs';

/**
 * The ids of the demo dataset (src/demo/user_42.jsonl), by name. The file is read once and
 * every id is looked up by what its record says (an entity's name, an episode's words, a
 * fact's subject / predicate / object, a memory's text), so the tests name the record they
 * mean and the file stays the one place the ids are written.
 */

type DemoLine =
  | { type: 'entity'; entityId: string; name: string }
  | { type: 'episode'; episodeId: string; content: string }
  | {
      type: 'fact';
      factId: string;
      subject: string;
      predicate: string;
      object: string;
      correctionOf?: string | null;
    }
  | { type: 'memory'; id: string; text: string };

const lines: DemoLine[] = readFileSync(
  new URL('../../src/demo/user_42.jsonl', import.meta.url),
  'utf8',
)
  .split('\n')
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line));

/** The one record of a type that matches; anything else is a broken demo file. */
function only<T extends DemoLine['type']>(
  type: T,
  what: string,
  matches: (line: Extract<DemoLine, { type: T }>) => boolean,
): Extract<DemoLine, { type: T }> {
  const found = lines
    .filter((line): line is Extract<DemoLine, { type: T }> => line.type === type)
    .filter(matches);
  if (found.length !== 1) {
    throw new Error(`demo dataset: ${found.length} ${type} records for ${what}, expected one`);
  }
  return found[0]!;
}

const entity = (name: string) => only('entity', name, (e) => e.name === name).entityId;
const episode = (words: string) =>
  only('episode', words, (e) => e.content.includes(words)).episodeId;
/** A fact as recorded (not a corrected version). */
const fact = (subject: string, predicate: string, object: string) =>
  only(
    'fact',
    `${subject} ${predicate} ${object}`,
    (f) =>
      f.subject === subject && f.predicate === predicate && f.object === object && !f.correctionOf,
  ).factId;
/** The corrected version of a fact (docs/TEMPORAL_MODEL.md). */
const versionOf = (factId: string) =>
  only('fact', `the version of ${factId}`, (f) => f.correctionOf === factId).factId;
const memory = (text: string) => only('memory', text, (m) => m.text === text).id;

export const DEMO = {
  entities: {
    user: entity('user'),
    toyota: entity('toyota corolla hybrid'),
    hondaCivic: entity('honda civic'),
    honda: entity('honda'),
    berlin: entity('berlin'),
  },
  episodes: {
    /** April: "I just moved to Berlin". */
    movedToBerlin: episode('moved to Berlin'),
    /** May: the family car, the Honda Civic, the budget. */
    hondaCivic: episode('the honda civic looks nice'),
    /** August: the Corolla hybrid and the test drive. */
    toyota: episode('the corola hybrid looks great'),
  },
  facts: {
    /** Deleted on 1 July 2026. */
    livesInBerlin: fact('user', 'lives in', 'berlin'),
    /** Superseded by toyotaInterest. */
    hondaInterest: fact('user', 'is interested in', 'honda civic'),
    /** Live. */
    familyCar: fact('user', 'is shopping for', 'a family car'),
    /** Valid until 1 September 2026. */
    budget: fact('user', 'has a budget of', '20000 euros'),
    /** Live. */
    hondaMadeBy: fact('honda civic', 'is made by', 'honda'),
    /** Live; supersedes hondaInterest. */
    toyotaInterest: fact('user', 'is interested in', 'toyota corolla hybrid'),
    /**
     * hondaInterest's corrected version: true from May until toyotaInterest began in
     * August, as known from the supersession on (expired now).
     */
    hondaInterestUntilToyota: versionOf(fact('user', 'is interested in', 'honda civic')),
    /** Valid from January 2035 (future). */
    testDrive: fact('user', 'will test drive', 'toyota corolla hybrid'),
  },
  memories: {
    /** Archived. */
    livesInBerlin: memory('The user lives in Berlin.'),
    /** Superseded by toyota. */
    hondaCivic: memory('The user is considering a Honda Civic.'),
    /** Live and pinned. */
    toyota: memory('The user is interested in a Toyota Corolla Hybrid.'),
    /** Live, at version 2. */
    shortAnswers: memory('The user prefers short, direct answers.'),
  },
} as const;
