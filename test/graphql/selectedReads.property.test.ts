/**
 * Answers read by selection against answers read whole, on random selections.
 *
 * Each case selects a random part of every field of a fact (and of the entities, episodes
 * and other facts it names) through five fields that read facts in one operation: a page
 * of the dataset's facts, the facts of each entity, one fact by id, the facts of each
 * episode and the fact of each change. Those five read with the projection their own
 * selection declares (src/schema/selectedReads.ts), the loaders merging a batch's. Every
 * answer must be the same as the part of the answer to the whole selection that the case
 * selected. The whole selection's answer is checked first against `node(id:)`'s, which
 * reads the fact whole, so a declaration that reads too little shows as a difference (or
 * a non-null error). A field that declares nothing makes its selection read the whole
 * document, which answers the same: the test fails on it too, since every read of the
 * operation must be projected (as the walk in selectedReads.test.ts fails on it).
 */

import fc from 'fast-check';
import type { Document } from 'mongodb';
import { beforeAll, expect, it } from 'vitest';
import { STATEMENT_FIELDS } from '../../src/store/documents.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { propertySeed } from '../helpers/propertySeed.js';

/**
 * A selection: each field (with its arguments, if any: the answer names it without them),
 * with its own selection when it is an object.
 */
type Selection = { [field: string]: Selection | true };

/** A fact's fields that name nothing else: its statement, its times, its ids and its state. */
const FACT_SCALARS = [
  'id',
  'factId',
  'dataset',
  ...STATEMENT_FIELDS,
  'validAt',
  'validUntil',
  'recordedAt',
  'invalidAt',
  'invalidReason',
  'episodeId',
  'state',
];
const scalars = (names: readonly string[]): Selection =>
  Object.fromEntries(names.map((n) => [n, true]));

/** A fact named by another: its own fields, one level down. */
const NAMED_FACT = scalars(FACT_SCALARS);
const ENTITY: Selection = {
  ...scalars(['id', 'entityId', 'dataset', 'name', 'type', 'updatedAt']),
  'facts(first: 3)': scalars(['factId', 'predicate', 'object']),
};

/** Every field of a fact, and of what it names. */
const WHOLE_FACT: Selection = {
  ...NAMED_FACT,
  subjectEntity: ENTITY,
  objectEntity: ENTITY,
  episode: {
    ...scalars(['id', 'episodeId', 'dataset', 'occurredAt', 'source', 'content', 'recordedAt']),
    'facts(first: 2)': scalars(['factId', 'predicate']),
  },
  supersededBy: NAMED_FACT,
  correctionOf: NAMED_FACT,
  correctedBy: NAMED_FACT,
  'history(first: 4)': NAMED_FACT,
};

const PRODUCERS = ['page', 'ofEntities', 'byId', 'ofEpisodes', 'ofChanges'] as const;
type Producer = (typeof PRODUCERS)[number];

function render(selection: Selection): string {
  return Object.entries(selection)
    .map(([field, sub]) => (sub === true ? field : `${field} { ${render(sub)} }`))
    .join(' ');
}

/** One operation: each producer reading facts with its selection. */
function operation(selections: Record<Producer, Selection>, factId: string): string {
  return `{ dataset(name: "user_42") {
    page: facts(first: 12, includeInvalidated: true) { edges { node { ${render(selections.page)} } } }
    ofEntities: entities(first: 6) { edges { node { name facts(first: 6, includeInvalidated: true) { ${render(selections.ofEntities)} } } } }
    byId: fact(factId: "${factId}") { ${render(selections.byId)} }
    ofEpisodes: episodes(first: 4) { edges { node { episodeId facts(first: 6) { ${render(selections.ofEpisodes)} } } } }
    ofChanges: changes(first: 30) { edges { node { id fact { ${render(selections.ofChanges)} } } } }
  } }`;
}

const answerName = (field: string) => field.replace(/\(.*$/, '');

/** The part of `answer` that `selection` asks for (through lists and nulls). */
function part(answer: unknown, selection: Selection): unknown {
  if (answer === null || answer === undefined) return answer;
  if (Array.isArray(answer)) return answer.map((a) => part(a, selection));
  const object = answer as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(selection).map(([field, sub]) => [
      answerName(field),
      sub === true ? object[field] : part(object[answerName(field)], sub),
    ]),
  );
}

// biome-ignore lint/suspicious/noExplicitAny: the answer's shape is the operation's, built here
type Answer = any;

/** The facts each producer answered with, in order, from an operation's data. */
function factsOf(data: { dataset: Record<string, Answer> }): Record<Producer, unknown> {
  const d = data.dataset;
  return {
    page: d.page.edges.map((e: Answer) => e.node),
    ofEntities: d.ofEntities.edges.map((e: Answer) => [e.node.name, e.node.facts]),
    byId: d.byId,
    ofEpisodes: d.ofEpisodes.edges.map((e: Answer) => [e.node.episodeId, e.node.facts]),
    ofChanges: d.ofChanges.edges.map((e: Answer) => [e.node.id, e.node.fact]),
  };
}

/** `part` of a producer's facts, past the entity, episode or change each list belongs to. */
function partOfFacts(producer: Producer, facts: unknown, selection: Selection): unknown {
  if (producer === 'page' || producer === 'byId') return part(facts, selection);
  return (facts as [string, unknown][]).map(([owner, f]) => [owner, part(f, selection)]);
}

/** A random non-empty part of `whole`. */
function selectionOf(whole: Selection): fc.Arbitrary<Selection> {
  const fields = Object.keys(whole);
  return fc.subarray(fields, { minLength: 1 }).chain((chosen) =>
    fc
      .tuple(
        ...chosen.map((field) => {
          const sub = whole[field]!;
          return sub === true ? fc.constant(true as const) : selectionOf(sub);
        }),
      )
      .map((subs) => Object.fromEntries(chosen.map((field, i) => [field, subs[i]!]))),
  );
}

let t: TestGateway;
/** The find commands of the gateway's reads (`store:` comments), as sent. */
const reads: Document[] = [];

/**
 * The documents the last operation read whole (no projection, or FACT_VIEW's exclusions)
 * though its selections declare what they read: a selected field that declares nothing
 * makes its whole selection read the document, which answers the same, so only this sees it.
 */
const readWhole = () =>
  reads
    // The stored types read by selection (src/schema/selectedReads.ts).
    .filter((c) => ['facts', 'entities', 'episodes'].includes(c.find))
    .filter(
      (c) =>
        c.projection === undefined ||
        Object.entries(c.projection as object).some(([f, v]) => f !== '_id' && v === 0),
    )
    .map((c) => `${c.comment} on ${c.find}`);
let key: string;
let factIds: string[];
/** The whole selection's answer, by the fact `byId` asks for. */
const wholeAnswers = new Map<string, Record<Producer, unknown>>();

const WHOLE = Object.fromEntries(PRODUCERS.map((p) => [p, WHOLE_FACT])) as Record<
  Producer,
  Selection
>;

async function ask(query: string) {
  const { status, body } = await t.graphqlText(query, {}, key);
  expect(body.errors).toBeUndefined();
  expect(status).toBe(200);
  return factsOf(body.data);
}

beforeAll(async () => {
  t = await openTestGateway({ clientOptions: { monitorCommands: true } });
  t.database.client.on('commandStarted', (event) => {
    if (event.commandName === 'find') reads.push(event.command);
  });
  key = await t.key('acme', ['read']);
  const stored = await t.database.collections.facts.find({ dataset: 'user_42' }).toArray();
  factIds = stored.map((f) => f.factId);
  expect(factIds.length).toBeGreaterThan(5);

  for (const factId of factIds) {
    const whole = await ask(operation(WHOLE, factId));
    wholeAnswers.set(factId, whole);
    // The whole selection answers as the whole document does: `node(id:)` reads the fact
    // whole (what it names is read by the same selections as here).
    const byId = whole.byId as { id: string };
    const { body } = await t.graphqlText(
      `{ node(id: "${byId.id}") { ... on Fact { ${render(WHOLE_FACT)} } } }`,
      {},
      key,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data.node).toEqual(byId);
  }

  // Not vacuous: the facts name what the selections ask about.
  const page = wholeAnswers.get(factIds[0]!)!.page as Record<string, unknown>[];
  for (const field of ['supersededBy', 'correctionOf', 'objectEntity', 'episode']) {
    expect(
      page.some((f) => f[field] !== null),
      `a fact with ${field}`,
    ).toBe(true);
  }
  expect(page.some((f) => (f.history as unknown[]).length > 1)).toBe(true);
  expect(page.some((f) => (f.subjectEntity as { facts: unknown[] } | null)?.facts.length)).toBe(
    true,
  );
});

it('a random selection of facts answers what the whole selection answers, field for field', async () => {
  const seed = propertySeed('selectedReads');
  let compared = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.record(
        Object.fromEntries(PRODUCERS.map((p) => [p, selectionOf(WHOLE_FACT)])) as Record<
          Producer,
          fc.Arbitrary<Selection>
        >,
      ),
      fc.integer({ min: 0, max: 1000 }),
      async (selections, pick) => {
        const factId = factIds[pick % factIds.length]!;
        reads.length = 0;
        const answer = await ask(operation(selections, factId));
        expect(readWhole()).toEqual([]);
        const whole = wholeAnswers.get(factId)!;
        for (const producer of PRODUCERS) {
          expect(answer[producer], producer).toEqual(
            partOfFacts(producer, whole[producer], selections[producer]),
          );
          compared++;
        }
      },
    ),
    { seed, numRuns: 60 },
  );
  expect(compared).toBe(60 * PRODUCERS.length);
});
