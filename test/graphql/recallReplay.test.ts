import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../bench/generate.js';
import { analyze } from '../../src/domain/recallTerms.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { DEMO } from '../helpers/demo.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Recall replayed at (T, K): "what would recall have answered when only what was known at K
 * was known?". On the demo dataset, the question an agent's user asks ("what did it know
 * when it answered?"); on a generated history of facts and of memories changed version by
 * version (updated, archived, pinned, superseded) at known instants, every answer is
 * checked against a reference the test computes from the same view: the facts recorded by
 * K, not invalidated by K and valid at T, and each memory as this test last saw it change
 * by K, with BM25 restated here.
 */

const DAY = 86_400_000;
const T0 = Date.parse('2025-01-01T00:00:00.000Z');
let clockMs = T0;
let t: TestGateway;
let key: string;

beforeAll(async () => {
  t = await openTestGateway({
    demoWorkspaces: ['acme'],
    gateway: { clock: () => new Date(clockMs) },
  });
  key = await t.key('acme', ['read', 'write']);
});

async function graphql(query: string, variables: Record<string, unknown>) {
  const response = await t.request('/graphql', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await response.json();
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
}

const RECALL = `query Replay($dataset: String!, $query: String!, $first: Int, $asOf: DateTime,
  $validAt: DateTime, $knownAt: DateTime) {
  dataset(name: $dataset) {
    recall(query: $query, first: $first, asOf: $asOf, validAt: $validAt, knownAt: $knownAt) {
      facts { relevanceScore fact { factId }
        explanation { terms(first: 100) { term weight termFrequency documentFrequency idf } bm25 factors { name value } score } }
      memories { relevanceScore memory { memoryId text lastUsedAt }
        explanation { terms { term weight } bm25 factors { name value } score } }
    }
  }
}`;

interface Explanation {
  terms: { term: string; weight: number; termFrequency?: number; documentFrequency?: number }[];
  bm25: number;
  factors: { name: string; value: number }[];
  score: number;
}
interface Recalled {
  facts: { relevanceScore: number; fact: { factId: string }; explanation: Explanation }[];
  memories: {
    relevanceScore: number;
    memory: { memoryId: string; text: string; lastUsedAt: string | null };
    explanation: Explanation;
  }[];
}

const recall = async (variables: Record<string, unknown>): Promise<Recalled> =>
  (await graphql(RECALL, variables)).dataset.recall;

describe('recall replayed on the demo dataset', () => {
  beforeAll(() => {
    clockMs = Date.parse('2026-12-01T00:00:00.000Z');
  });
  const question = { dataset: 'user_42', query: 'Is the user interested in a Toyota?' };

  it('before the Corolla was learned, the Honda interest ranks first, and says why', async () => {
    // The Toyota interest was recorded at 09:14:06, superseding the Honda one.
    const before = await recall({ ...question, knownAt: '2026-08-16T09:14:05Z' });
    const honda = before.facts[0]!;
    expect(honda.fact.factId).toBe(DEMO.facts.hondaInterest);
    expect(honda.relevanceScore).toBe(1);
    expect(before.facts.map((f) => f.fact.factId)).not.toContain(DEMO.facts.toyotaInterest);
    // The rarer term weighs more: "interest" is in two facts of the view, "user" in most.
    expect(honda.explanation.terms.map((w) => w.term)).toEqual(['interest', 'user']);
    expect(honda.explanation.factors.map((f) => f.name)).toEqual(['confidence', 'recency']);
    expect(honda.explanation.factors[0]!.value).toBeCloseTo(0.9 + 0.1 * 0.8, 12);
    // README's worked replay: five facts recorded by then, "interest" in one, "user" in four.
    expect(honda.explanation.terms.map((w) => w.documentFrequency)).toEqual([1, 4]);
    expect(before.facts[1]!.fact.factId).toBe(DEMO.facts.familyCar);
    expect(before.facts[1]!.relevanceScore).toBe(0.1736);
    expect(honda.explanation.score).toBeCloseTo(
      honda.explanation.bm25 * honda.explanation.factors.reduce((p, f) => p * f.value, 1),
      12,
    );

    const after = await recall({ ...question, knownAt: '2026-08-16T09:14:07Z' });
    expect(after.facts[0]!.fact.factId).toBe(DEMO.facts.toyotaInterest);
    expect(after.facts.map((f) => f.fact.factId)).not.toContain(DEMO.facts.hondaInterest);
  });

  it('asOf is both instants; validAt alone is corrected history', async () => {
    const asOf = await recall({ ...question, asOf: '2026-08-16T09:14:05Z' });
    const both = await recall({
      ...question,
      validAt: '2026-08-16T09:14:05Z',
      knownAt: '2026-08-16T09:14:05Z',
    });
    expect(asOf).toEqual(both);
    // What we now know was true in June: the Honda interest (superseded only later on
    // transaction time, it is no longer believed), so not it.
    const june = await recall({ ...question, validAt: '2026-06-01T00:00:00Z' });
    expect(june.facts.map((f) => f.fact.factId)).not.toContain(DEMO.facts.hondaInterest);
  });
});

// ---------------------------------------------------------------- generated histories

const WORDS = ['apple', 'banana', 'cherries', 'driving', 'engines', 'falcon', 'garden', 'harbour'];
const PREDICATES = ['likes', 'drives', 'visited', 'owns', 'is allergic to'];

interface GeneratedFact {
  factId: string;
  text: string;
  confidence: number;
  validAt: number;
  validUntil: number | null;
  recordedAt: number;
  invalidAt: number | null;
}

/** A memory's fields that recall reads, as the store answered a write at `at`. */
interface MemoryState {
  at: number;
  memoryId: string;
  text: string;
  importance: number;
  salience: number;
  pinned: boolean;
  archivedAt: number | null;
  createdAt: number;
  validFrom: number;
  validUntil: number | null;
}

const MEMORY_FIELDS =
  'memoryId text importance salience pinned archivedAt createdAt validFrom validUntil';

const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));
const stateOf = (m: Record<string, unknown>, at: number): MemoryState => ({
  at,
  memoryId: m.memoryId as string,
  text: m.text as string,
  importance: m.importance as number,
  salience: m.salience as number,
  pinned: m.pinned as boolean,
  archivedAt: ms(m.archivedAt as string | null),
  createdAt: ms(m.createdAt as string)!,
  validFrom: ms(m.validFrom as string)!,
  validUntil: ms(m.validUntil as string | null),
});

/**
 * BM25 as the README states it, restated here, over the candidates of one kind: with
 * `recorded` (facts), N and df(t) are over the texts recorded by K (every version), else
 * over the view (memories).
 */
function reference(
  query: string,
  candidates: { id: string; text: string; time: number; factors: number[] }[],
  documentsInView: number,
  recorded?: string[],
) {
  const terms = [...new Set(analyze(query))];
  const words = candidates.map((c) => analyze(c.text));
  const avgdl = words.reduce((s, w) => s + w.length, 0) / words.length || 1;
  const counted = recorded ? recorded.map((text) => analyze(text)) : words;
  const df = (term: string) => counted.filter((w) => w.includes(term)).length;
  const n = recorded ? recorded.length : Math.max(documentsInView, candidates.length);
  return candidates
    .map((c, i) => {
      const found = terms.filter((term) => words[i]!.includes(term));
      const weights = found.map((term) => {
        const tf = words[i]!.filter((w) => w === term).length;
        const idf = Math.log(1 + (n - df(term) + 0.5) / (df(term) + 0.5));
        return {
          term,
          weight: (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * words[i]!.length) / avgdl)),
        };
      });
      weights.sort((a, b) => b.weight - a.weight);
      const bm25 = weights.reduce((s, w) => s + w.weight, 0);
      // The floor: a term in more than half of a view of at least ten is common, and an
      // item whose only matching terms are common is not recalled.
      const common = (term: string) => n >= 10 && df(term) > n / 2;
      const admitted = found.some((term) => !common(term));
      return { ...c, weights, bm25, admitted, score: c.factors.reduce((p, f) => p * f, bm25) };
    })
    .filter((c) => c.bm25 > 0 && c.admitted)
    .sort((a, b) => b.score - a.score || b.time - a.time || (a.id < b.id ? 1 : -1));
}

describe('recall replayed on a generated history', () => {
  const dataset = 'replay';
  const facts: GeneratedFact[] = [];
  /** Every memory's states, in the order the writes made them. */
  const history = new Map<string, MemoryState[]>();
  let end = T0;

  beforeAll(async () => {
    const random = prng(7);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const phrase = () => `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`;

    for (let i = 0; i < 120; i++) {
      const validAt = T0 + Math.floor(random() * 400) * DAY;
      const recordedAt = validAt + Math.floor(random() * 30) * DAY;
      facts.push({
        factId: randomUUID(),
        text: `person ${i % 15} ${pick(PREDICATES)} ${pick(WORDS)} ${pick(WORDS)}`,
        confidence: Math.round(random() * 100) / 100,
        validAt,
        validUntil: random() < 0.2 ? validAt + (1 + Math.floor(random() * 200)) * DAY : null,
        recordedAt,
        invalidAt: random() < 0.25 ? recordedAt + (1 + Math.floor(random() * 200)) * DAY : null,
      });
    }
    const lines = facts.map((f) => {
      const [subject, n, predicate, ...object] = f.text.split(' ');
      return JSON.stringify({
        type: 'fact',
        dataset,
        factId: f.factId,
        subject: `${subject} ${n}`,
        predicate,
        object: object.join(' '),
        confidence: f.confidence,
        validAt: new Date(f.validAt).toISOString(),
        validUntil: f.validUntil === null ? null : new Date(f.validUntil).toISOString(),
        recordedAt: new Date(f.recordedAt).toISOString(),
        invalidAt: f.invalidAt === null ? null : new Date(f.invalidAt).toISOString(),
        invalidReason: f.invalidAt === null ? null : 'deleted',
      });
    });
    const outcome = await importJsonl(t.database.collections, {
      now: new Date(T0),
      workspace: 'acme',
      content: lines.join('\n'),
    });
    expect(outcome.ok).toBe(true);

    // Memories written through the API, one write a day, each kind of version among them.
    const record = (m: Record<string, unknown>) => {
      const state = stateOf(m, clockMs);
      history.set(state.memoryId, [...(history.get(state.memoryId) ?? []), state]);
    };
    clockMs = T0;
    for (let i = 0; i < 12; i++) {
      clockMs += DAY;
      const data = await graphql(
        `mutation($dataset: String!, $input: MemoryInput!) { createMemory(dataset: $dataset, input: $input) { ${MEMORY_FIELDS} } }`,
        {
          dataset,
          input: {
            text: `The user ${phrase()}.`,
            memoryKind: 'fact',
            scope: 'user',
            sourceType: 'chat',
            importance: Math.round(random() * 100) / 100,
            salience: Math.round(random() * 100) / 100,
            pinned: random() < 0.3,
          },
        },
      );
      record(data.createMemory);
    }
    for (let i = 0; i < 40; i++) {
      clockMs += DAY;
      const live = [...history.values()]
        .map((states) => states.at(-1)!)
        .filter((m) => m.validUntil === null);
      const memory = pick(live);
      const vars = { dataset, memoryId: memory.memoryId };
      const action = pick(['update', 'update', 'archive', 'pin', 'supersede']);
      if (action === 'update') {
        const data = await graphql(
          `mutation($dataset: String!, $memoryId: ID!, $patch: MemoryPatch!) { updateMemory(dataset: $dataset, memoryId: $memoryId, patch: $patch) { ${MEMORY_FIELDS} } }`,
          {
            ...vars,
            patch: { text: `The user ${phrase()}.`, importance: Math.round(random() * 100) / 100 },
          },
        );
        record(data.updateMemory);
      } else if (action === 'archive' || action === 'pin') {
        const name =
          action === 'archive'
            ? memory.archivedAt === null
              ? 'archiveMemory'
              : 'unarchiveMemory'
            : memory.pinned
              ? 'unpinMemory'
              : 'pinMemory';
        const data = await graphql(
          `mutation($dataset: String!, $memoryId: ID!) { ${name}(dataset: $dataset, memoryId: $memoryId) { ${MEMORY_FIELDS} } }`,
          vars,
        );
        record(data[name]);
      } else {
        const data = await graphql(
          `mutation($dataset: String!, $memoryId: ID!, $input: MemoryInput!) { supersedeMemory(dataset: $dataset, memoryId: $memoryId, input: $input) { previous { ${MEMORY_FIELDS} } memory { ${MEMORY_FIELDS} } } }`,
          {
            ...vars,
            input: {
              text: `The user ${phrase()}.`,
              memoryKind: 'fact',
              scope: 'user',
              sourceType: 'chat',
            },
          },
        );
        record(data.supersedeMemory.previous);
        record(data.supersedeMemory.memory);
      }
    }
    end = clockMs;
    // Every version kind happened (the history is not vacuous).
    const states = [...history.values()];
    expect(states.some((s) => s.length > 2)).toBe(true);
    expect(states.some((s) => s.some((m) => m.archivedAt !== null))).toBe(true);
    expect(states.some((s) => s.some((m) => m.validUntil !== null))).toBe(true);
  });

  /** The memories as they were at K, in the replayed view at (T, K). */
  function memoriesAt(validAt: number, knownAt: number) {
    const view: MemoryState[] = [];
    for (const states of history.values()) {
      const then = states.filter((s) => s.at <= knownAt).at(-1);
      if (!then) continue;
      const valid =
        then.validFrom <= validAt && (then.validUntil === null || then.validUntil > validAt);
      const archived = then.archivedAt !== null && then.archivedAt <= knownAt;
      if (valid && !archived) view.push(then);
    }
    return view;
  }

  const factsAt = (validAt: number, knownAt: number) =>
    facts.filter(
      (f) =>
        f.recordedAt <= knownAt &&
        (f.invalidAt === null || f.invalidAt > knownAt) &&
        f.validAt <= validAt &&
        (f.validUntil === null || f.validUntil > validAt),
    );

  it('answers, at many instants on both axes, what the reference computes from the same view', async () => {
    const random = prng(11);
    let memoriesCompared = 0;
    let factsCompared = 0;
    for (let i = 0; i < 30; i++) {
      const knownAt = T0 + Math.floor(random() * ((end - T0) / DAY + 60)) * DAY + 12 * 3_600_000;
      const validAt = T0 + Math.floor(random() * 450) * DAY + 6 * 3_600_000;
      const query = `${WORDS[Math.floor(random() * WORDS.length)]} ${WORDS[Math.floor(random() * WORDS.length)]}`;
      const answer = await recall({
        dataset,
        query,
        first: 50,
        validAt: new Date(validAt).toISOString(),
        knownAt: new Date(knownAt).toISOString(),
      });

      const factView = factsAt(validAt, knownAt);
      const expectedFacts = reference(
        query,
        factView.map((f) => ({
          id: f.factId,
          text: f.text,
          time: f.validAt,
          factors: [
            0.9 + 0.1 * f.confidence,
            0.9 + 0.1 / (1 + Math.max(0, validAt - f.validAt) / (365 * DAY)),
          ],
        })),
        factView.length,
        facts.filter((f) => f.recordedAt <= knownAt).map((f) => f.text),
      );
      expect(answer.facts.map((f) => f.fact.factId)).toEqual(expectedFacts.map((f) => f.id));
      answer.facts.forEach((f, k) => {
        const e = expectedFacts[k]!;
        expect(f.relevanceScore).toBeCloseTo(e.score / expectedFacts[0]!.score, 4);
        expect(f.explanation.terms.map((w) => w.term)).toEqual(e.weights.map((w) => w.term));
        f.explanation.terms.forEach((w, j) => {
          expect(w.weight).toBeCloseTo(e.weights[j]!.weight, 9);
        });
        expect(f.explanation.score).toBeCloseTo(e.score, 9);
      });
      factsCompared += answer.facts.length;

      const memoryView = memoriesAt(validAt, knownAt);
      const expectedMemories = reference(
        query,
        memoryView.map((m) => ({
          id: m.memoryId,
          text: m.text,
          time: m.createdAt,
          factors: [0.8 + 0.2 * m.importance, 0.9 + 0.1 * m.salience, ...(m.pinned ? [1.25] : [])],
        })),
        memoryView.length,
      );
      expect(answer.memories.map((m) => m.memory.memoryId)).toEqual(
        expectedMemories.map((m) => m.id),
      );
      answer.memories.forEach((m, k) => {
        const e = expectedMemories[k]!;
        // The memory as it was then, its text included.
        expect(m.memory.text).toBe(e.text);
        expect(m.relevanceScore).toBeCloseTo(e.score / expectedMemories[0]!.score, 4);
        expect(m.explanation.score).toBeCloseTo(e.score, 9);
      });
      memoriesCompared += answer.memories.length;
    }
    // The comparisons compared something, of both kinds.
    expect(factsCompared).toBeGreaterThan(30);
    expect(memoriesCompared).toBeGreaterThan(10);
  });

  it('a memory changed after K is recalled by the text it had then, not by its text now', async () => {
    // A memory whose text changed later, live and not archived just before the change.
    const cases = [...history.values()].flatMap((states) =>
      states.flatMap((s, j) => {
        const then = states[j - 1];
        const now = states.at(-1)!;
        if (!then || s.text === then.text || then.validUntil !== null || then.archivedAt !== null)
          return [];
        const onlyThen = analyze(then.text).filter((w) => !analyze(now.text).includes(w));
        return onlyThen.length > 0 ? [{ then, knownAt: s.at - 1, onlyThen }] : [];
      }),
    );
    expect(cases.length).toBeGreaterThan(0);
    for (const { then, knownAt, onlyThen } of cases) {
      const answer = await recall({
        dataset,
        query: onlyThen.join(' '),
        first: 50,
        knownAt: new Date(knownAt).toISOString(),
        validAt: new Date(then.validFrom).toISOString(),
      });
      const found = answer.memories.find((m) => m.memory.memoryId === then.memoryId);
      expect(found?.memory.text).toBe(then.text);
    }
  });

  it('a replay stamps no lastUsedAt; a recall now does', async () => {
    const query = WORDS.join(' ');
    clockMs = end + DAY;
    const replayed = await recall({
      dataset,
      query,
      first: 50,
      knownAt: new Date(end).toISOString(),
    });
    expect(replayed.memories.length).toBeGreaterThan(0);
    const now = await recall({ dataset, query, first: 50 });
    expect(now.memories.length).toBeGreaterThan(0);
    // The replay's answer came first: had it stamped, the memories would carry its instant.
    for (const m of now.memories) expect(m.memory.lastUsedAt).toBe(new Date(clockMs).toISOString());
    const stored = await t.database.collections.memories
      .find({ dataset, lastUsedAt: { $ne: null } })
      .toArray();
    expect(stored.map((m) => m.memoryId).sort()).toEqual(
      now.memories.map((m) => m.memory.memoryId).sort(),
    );
    // And a replay after that leaves them as the recall now stamped them.
    clockMs += DAY;
    await recall({ dataset, query, first: 50, asOf: new Date(end).toISOString() });
    const again = await t.database.collections.memories
      .find({ dataset, lastUsedAt: { $ne: null } })
      .toArray();
    for (const m of again) expect(m.lastUsedAt?.getTime()).toBe(clockMs - DAY);
  });
});
