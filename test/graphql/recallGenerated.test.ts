import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { recallTerms } from '../../src/domain/recallTerms.js';
import { nearestTerms } from '../../src/domain/typos.js';
import { RECALL_CANDIDATE_CAP } from '../../src/store/recall.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Dataset.recall on generated histories: at several instants, every recalled fact is live
 * then on both axes and shares a term with the query, scores fall from 1, and when fewer
 * facts match than `first`, recall returns every one of them. Past the candidate cap, only
 * the most recent candidates are scored.
 */

const WORDS = ['apple', 'banana', 'cherries', 'driving', 'engines', 'falcon', 'garden', 'harbour'];
const PREDICATES = ['likes', 'drives', 'visited', 'owns', 'is allergic to'];
const DAY = 86_400_000;
const T0 = Date.parse('2025-01-01T00:00:00.000Z');

/** A small deterministic PRNG, so a failure replays. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

interface GeneratedFact {
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validAt: Date;
  validUntil: Date | null;
  recordedAt: Date;
  invalidAt: Date | null;
}

function generate(count: number, seed: number): GeneratedFact[] {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const validAt = new Date(T0 + Math.floor(random() * 600) * DAY);
    const recordedAt = new Date(validAt.getTime() + Math.floor(random() * 30) * DAY);
    const ends = random() < 0.2;
    const invalidated = random() < 0.2;
    return {
      factId: randomUUID(),
      subject: `person ${i % 40}`,
      predicate: pick(PREDICATES),
      object: `${pick(WORDS)} ${pick(WORDS)}`,
      validAt,
      validUntil: ends
        ? new Date(validAt.getTime() + (1 + Math.floor(random() * 200)) * DAY)
        : null,
      recordedAt,
      invalidAt: invalidated
        ? new Date(recordedAt.getTime() + (1 + Math.floor(random() * 200)) * DAY)
        : null,
    };
  });
}

const lineOf = (f: GeneratedFact, dataset: string) =>
  JSON.stringify({
    type: 'fact',
    dataset,
    factId: f.factId,
    subject: f.subject,
    predicate: f.predicate,
    object: f.object,
    confidence: 0.8,
    validAt: f.validAt.toISOString(),
    validUntil: f.validUntil?.toISOString() ?? null,
    recordedAt: f.recordedAt.toISOString(),
    invalidAt: f.invalidAt?.toISOString() ?? null,
    invalidReason: f.invalidAt ? 'deleted' : null,
  });

const liveAt = (f: GeneratedFact, at: Date) =>
  f.recordedAt <= at &&
  (f.invalidAt === null || f.invalidAt > at) &&
  f.validAt <= at &&
  (f.validUntil === null || f.validUntil > at);

let t: TestGateway;
let key: string;
const facts = generate(400, 7);

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  key = await t.key('gen', ['read']);
  const outcome = await importJsonl(t.database.collections, {
    workspace: 'gen',
    content: facts.map((f) => lineOf(f, 'people')).join('\n'),
    now: new Date(),
  });
  expect(outcome.ok).toBe(true);
});

async function recall(dataset: string, query: string, first: number, asOf: Date) {
  const response = await t.request('/graphql', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      query: `query($dataset: String!, $query: String!, $first: Int!, $asOf: DateTime) {
        dataset(name: $dataset) { recall(query: $query, first: $first, asOf: $asOf) {
          facts { relevanceScore fact { factId } } } }
      }`,
      variables: { dataset, query, first, asOf: asOf.toISOString() },
    }),
  });
  const body = await response.json();
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data.dataset.recall.facts as { relevanceScore: number; fact: { factId: string } }[];
}

describe('recall on generated histories', () => {
  const byId = new Map(facts.map((f) => [f.factId, f]));
  const instants = [60, 200, 365, 500, 700].map((d) => new Date(T0 + d * DAY));
  const queries = ['apple', 'cherry banana', 'who drives engines?', 'allergies to falcons', 'the'];

  it('live facts sharing a term only, scores falling from 1, every match when they are few', async () => {
    let checked = 0;
    for (const at of instants) {
      for (const query of queries) {
        const terms = new Set(recallTerms(query));
        // A term no fact recorded by then holds is read as the nearest that one holds
        // (README, "Typos"): "allergies" as "allerg".
        const textOf = (f: GeneratedFact) => recallTerms(`${f.subject} ${f.predicate} ${f.object}`);
        const recorded = facts.filter((f) => f.recordedAt <= at).flatMap(textOf);
        const vocabulary = facts.flatMap(textOf);
        for (const term of [...terms]) {
          if (recorded.includes(term)) continue;
          const read = nearestTerms(term, vocabulary)
            .slice(0, 3)
            .find((c) => recorded.includes(c.term));
          if (read) terms.add(read.term);
        }
        const matching = facts.filter(
          (f) =>
            liveAt(f, at) &&
            recallTerms(`${f.subject} ${f.predicate} ${f.object}`).some((w) => terms.has(w)),
        );
        const recalled = await recall('people', query, 50, at);
        for (const r of recalled) {
          const f = byId.get(r.fact.factId)!;
          expect(liveAt(f, at), `${query} at ${at.toISOString()}`).toBe(true);
          expect(matching).toContain(f);
          expect(r.relevanceScore).toBeGreaterThan(0);
          expect(r.relevanceScore).toBeLessThanOrEqual(1);
        }
        const scores = recalled.map((r) => r.relevanceScore);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));
        if (recalled.length > 0) expect(scores[0]).toBe(1);
        expect(recalled).toHaveLength(Math.min(50, matching.length));
        checked += recalled.length;
      }
    }
    // The generated histories must give the checks something to check.
    expect(checked).toBeGreaterThan(100);
  });

  it(`past ${RECALL_CANDIDATE_CAP} candidates, only the most recent are scored`, async () => {
    const many = Array.from({ length: RECALL_CANDIDATE_CAP + 100 }, (_, i) => ({
      factId: randomUUID(),
      subject: 'user',
      predicate: 'likes',
      // The 100 oldest say "quince" twice: they would score best, were they scored.
      object: i < 100 ? 'quince quince jam' : `quince number ${i}`,
      validAt: new Date(T0 + i * 60_000),
      validUntil: null,
      recordedAt: new Date(T0 + i * 60_000),
      invalidAt: null,
    }));
    // As many again that do not say it, so "quince" is not in most of the view (a common
    // term recalls nothing alone: domain/recall.ts).
    const others = many.map((f, i) => ({
      ...f,
      factId: randomUUID(),
      predicate: 'owns',
      object: `pear number ${i}`,
    }));
    const outcome = await importJsonl(t.database.collections, {
      workspace: 'gen',
      content: [...many, ...others].map((f) => lineOf(f, 'crowded')).join('\n'),
      now: new Date(),
    });
    expect(outcome.ok).toBe(true);
    const recalled = await recall('crowded', 'quince', 50, new Date(T0 + 400 * DAY));
    expect(recalled).toHaveLength(50);
    const oldest = new Set<string>(many.slice(0, 100).map((f) => f.factId));
    expect(recalled.filter((r) => oldest.has(r.fact.factId))).toEqual([]);
  });
});
