import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyze } from '../src/domain/recallTerms.js';
import { startFerretDb } from '../src/embedded/ferretdb.js';
import { createGateway } from '../src/http/app.js';
import { openDatabase } from '../src/store/database.js';
import type { FactDoc } from '../src/store/documents.js';
import { bitemporalFilter } from '../src/store/factFilters.js';
import { FACT_ORDER } from '../src/store/orders.js';
import { recordEpisode } from '../src/store/recordEpisode.js';
import { createApiKey, workspaceIdFor } from '../src/store/workspaces.js';
import { round3 } from './measure.js';
import {
  CATEGORIES,
  type Category,
  type LabelledQuestion,
  QUALITY_NOW,
  QUESTIONS,
  SESSIONS,
} from './recallQuestions.js';

/**
 * Recall's quality (`npm run bench:recall`, its first half): the conversations of
 * bench/recallQuestions.ts written through `recordEpisode` into a fresh embedded database,
 * then every labelled question asked of today's recall (GraphQL `Dataset.recall`, first
 * 10) and of the recall before its second round, restated here on the same store: BM25
 * over the statement's terms alone, N and df from the view, no time read from the
 * question, no quote, no floor, no entities, no typos. Per category and overall:
 * Recall@1, Recall@5 (the share of a question's answers among the first 1 or 5) and MRR
 * (1 / the rank of the first answer); for a question with nothing relevant, each is 1 when
 * nothing is recalled and 0 otherwise.
 */

const WORKSPACE = 'recall-quality';
const DATASET = 'maya';
const FIRST = 10;

export interface QualityRow {
  category: Category | 'all';
  questions: number;
  before: { recallAt1: number; recallAt5: number; mrr: number };
  now: { recallAt1: number; recallAt5: number; mrr: number };
}

/** The recall before this round, restated: what `POST /v1/memory/recall` answered then. */
async function recallBefore(
  facts: import('mongodb').Collection<FactDoc>,
  workspaceId: string,
  query: string,
  now: Date,
): Promise<string[]> {
  const terms = [...new Set(analyze(query))];
  if (terms.length === 0) return [];
  const view = [{ workspaceId, dataset: DATASET }, ...bitemporalFilter(now, now)];
  const [candidates, inView] = await Promise.all([
    facts
      .find({ $and: [...view, { recallTerms: { $in: terms } }] })
      .sort(FACT_ORDER)
      .limit(1000)
      .toArray(),
    facts.countDocuments({ $and: view }),
  ]);
  const words = candidates.map((f) => analyze(`${f.subject} ${f.predicate} ${f.object}`));
  const df = (t: string) => words.filter((w) => w.includes(t)).length;
  const n = Math.max(inView, candidates.length);
  const avgdl = words.reduce((s, w) => s + w.length, 0) / (words.length || 1) || 1;
  return candidates
    .map((f, i) => {
      const w = words[i]!;
      let bm25 = 0;
      for (const t of terms) {
        const tf = w.filter((x) => x === t).length;
        if (tf === 0) continue;
        const idf = Math.log(1 + (n - df(t) + 0.5) / (df(t) + 0.5));
        bm25 += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * w.length) / avgdl));
      }
      const years = Math.max(0, now.getTime() - f.validAt.getTime()) / (365 * 86_400_000);
      const score = bm25 * (0.9 + 0.1 * f.confidence) * (0.9 + 0.1 / (1 + years));
      return { id: f.factId, score, time: f.validAt.getTime() };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || b.time - a.time || (a.id < b.id ? 1 : -1))
    .slice(0, FIRST)
    .map((s) => s.id);
}

/**
 * Recall@1, Recall@5 and the reciprocal rank of one answer: `answers` are the statements
 * that answer it, each the ids of its versions; a statement is found when one is ranked.
 */
function measured(answers: readonly (readonly string[])[], ranked: readonly string[]) {
  if (answers.length === 0) {
    const right = ranked.length === 0 ? 1 : 0;
    return { recallAt1: right, recallAt5: right, mrr: right };
  }
  const within = (k: number) =>
    answers.filter((versions) => ranked.slice(0, k).some((id) => versions.includes(id))).length /
    Math.min(k, answers.length);
  const first = ranked.findIndex((id) => answers.some((versions) => versions.includes(id)));
  return { recallAt1: within(1), recallAt5: within(5), mrr: first < 0 ? 0 : 1 / (first + 1) };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / (xs.length || 1);

export async function recallQuality(): Promise<{ rows: QualityRow[]; misses: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'recall-quality-'));
  const ferret = await startFerretDb(join(dir, 'db'));
  const database = await openDatabase(ferret.uri, 'recall_quality');
  try {
    const db = database.collections;
    const workspaceId = workspaceIdFor(WORKSPACE);
    const tenant = { workspaceId, dataset: DATASET };
    // Written as the agent heard them: each session at its time, through recordEpisode.
    for (const session of SESSIONS) {
      const at = new Date(session.at);
      await recordEpisode(
        db,
        tenant,
        {
          episodeId: randomUUID(),
          occurredAt: at,
          source: 'chat',
          content: session.content,
          entities: session.entities,
          facts: session.facts.map((f) => {
            const [subject, predicate, object] = f.key.split(' | ') as [string, string, string];
            return {
              subject,
              predicate,
              object,
              objectIsEntity: f.objectIsEntity ?? false,
              confidence: 0.9,
              sourceQuote: f.quote,
              validAt: new Date(f.validAt ?? session.at),
              validUntil: f.validUntil ? new Date(f.validUntil) : null,
              supersedes: [],
              replaceExisting: f.replaceExisting ?? false,
            };
          }),
        },
        new Date(at.getTime() + 60_000),
      );
    }
    // The labels' facts: every version of each statement.
    const ids = new Map<string, string[]>();
    for (const f of await db.facts.find({ workspaceId, dataset: DATASET }).toArray()) {
      const key = `${f.subject} | ${f.predicate} | ${f.object}`;
      ids.set(key, [...(ids.get(key) ?? []), f.factId]);
    }
    const idOf = (key: string) => {
      const versions = ids.get(key);
      if (!versions) throw new Error(`a label names no recorded fact: ${key}`);
      return versions;
    };

    const now = new Date(QUALITY_NOW);
    const key = (await createApiKey(db, WORKSPACE, ['read'])).key;
    const gateway = createGateway({ database, clock: () => now });
    const recallNow = async (question: string) => {
      const response = await gateway.fetch(
        new Request('http://127.0.0.1/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            query:
              'query($q: String!) { dataset(name: "maya") { recall(query: $q, first: 10) { facts { fact { factId } } } } }',
            variables: { q: question },
          }),
        }),
      );
      const body = (await response.json()) as {
        data?: { dataset: { recall: { facts: { fact: { factId: string } }[] } } };
        errors?: unknown;
      };
      if (!body.data) throw new Error(`recall failed: ${JSON.stringify(body.errors)}`);
      return body.data.dataset.recall.facts.map((f) => f.fact.factId);
    };

    const results: {
      q: LabelledQuestion;
      before: ReturnType<typeof measured>;
      now: ReturnType<typeof measured>;
    }[] = [];
    const misses: string[] = [];
    for (const q of QUESTIONS) {
      const answers = q.answers.map(idOf);
      const [before, ranked] = await Promise.all([
        recallBefore(db.facts, workspaceId, q.question, now),
        recallNow(q.question),
      ]);
      const scored = { q, before: measured(answers, before), now: measured(answers, ranked) };
      results.push(scored);
      if (scored.now.mrr < 1) {
        const statement = (id: string) =>
          [...ids].find(([, versions]) => versions.includes(id))?.[0] ?? id;
        const first = ranked.slice(0, 3).map(statement).join('; ') || 'nothing';
        misses.push(
          `${q.category}: "${q.question}" (MRR ${round3(scored.now.mrr)}; first: ${first})`,
        );
      }
    }
    const row = (category: Category | 'all'): QualityRow => {
      const of = results.filter((r) => category === 'all' || r.q.category === category);
      const avg = (side: 'before' | 'now') => ({
        recallAt1: round3(mean(of.map((r) => r[side].recallAt1))),
        recallAt5: round3(mean(of.map((r) => r[side].recallAt5))),
        mrr: round3(mean(of.map((r) => r[side].mrr))),
      });
      return { category, questions: of.length, before: avg('before'), now: avg('now') };
    };
    return { rows: [...CATEGORIES.map(row), row('all')], misses };
  } finally {
    await database.close();
    await ferret.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
