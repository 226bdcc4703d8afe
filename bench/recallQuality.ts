import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../src/clock.js';
import { startFerretDb } from '../src/embedded/ferretdb.js';
import { loadEmbedder } from '../src/embeddings/embedder.js';
import { ensureModelFiles, readModelFiles } from '../src/embeddings/modelFiles.js';
import { MeaningIndex } from '../src/recall/meaningIndex.js';
import { recall } from '../src/recall/recall.js';
import { openDatabase } from '../src/store/database.js';
import { embedPending } from '../src/store/embeddings.js';
import { recordEpisode } from '../src/store/recordEpisode.js';
import { workspaceIdFor } from '../src/store/workspaces.js';
import { round3 } from './measure.js';
import { PARAPHRASES, TRAP_SESSION } from './recallParaphrases.js';
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
 * bench/recallQuestions.ts (and the trap facts of bench/recallParaphrases.ts) written
 * through `recordEpisode` into a fresh embedded database, their vectors stored, then every
 * labelled question asked of the recall service (src/recall/recall.ts, first 10) in three
 * configurations: the words leg alone (what EMBEDDINGS=off answers), the meaning leg
 * alone, and both fused (what every surface answers). Per category and overall: Recall@1,
 * Recall@5 (the share of a question's answers among the first 1 or 5) and MRR (1 / the
 * rank of the first answer); for a question with nothing relevant, each is 1 when nothing
 * is recalled and 0 otherwise.
 */

const WORKSPACE = 'recall-quality';
const DATASET = 'maya';
const FIRST = 10;

const CONFIGURATIONS = ['words', 'meaning', 'hybrid'] as const;
type Configuration = (typeof CONFIGURATIONS)[number];
type Measured = { recallAt1: number; recallAt5: number; mrr: number };

export interface QualityRow {
  category: Category | 'all';
  questions: number;
  words: Measured;
  meaning: Measured;
  hybrid: Measured;
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
  await ensureModelFiles((line) => console.error(line));
  const embedder = await loadEmbedder(readModelFiles());
  try {
    const db = database.collections;
    const workspaceId = workspaceIdFor(WORKSPACE);
    const tenant = { workspaceId, dataset: DATASET };
    // Written as the agent heard them: each session at its time, through recordEpisode.
    for (const session of [...SESSIONS, TRAP_SESSION]) {
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
    await embedPending(db, embedder, tenant);
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
    const meaning = { embedder, index: new MeaningIndex(() => systemClock().getTime()) };
    const ask = async (configuration: Configuration, question: string) => {
      const facts = await recall(
        {
          store: db,
          now,
          problems: [],
          meaning: configuration === 'words' ? null : meaning,
          legs: configuration === 'meaning' ? 'meaning' : 'both',
        },
        tenant,
        { query: question, first: FIRST, asOf: null, validAt: null, knownAt: null },
      ).facts();
      return facts.map((f) => f.item.factId);
    };

    const results: { q: LabelledQuestion; by: Record<Configuration, Measured> }[] = [];
    const misses: string[] = [];
    const statement = (id: string) =>
      [...ids].find(([, versions]) => versions.includes(id))?.[0] ?? id;
    for (const q of [...QUESTIONS, ...PARAPHRASES]) {
      const answers = q.answers.map(idOf);
      const by = {} as Record<Configuration, Measured>;
      for (const configuration of CONFIGURATIONS) {
        const ranked = await ask(configuration, q.question);
        by[configuration] = measured(answers, ranked);
        if (configuration === 'hybrid' && by.hybrid.mrr < 1) {
          const first = ranked.slice(0, 3).map(statement).join('; ') || 'nothing';
          misses.push(
            `${q.category}: "${q.question}" (MRR ${round3(by.hybrid.mrr)}; first: ${first})`,
          );
        }
      }
      results.push({ q, by });
    }
    const row = (category: Category | 'all'): QualityRow => {
      const of = results.filter((r) => category === 'all' || r.q.category === category);
      const avg = (c: Configuration) => ({
        recallAt1: round3(mean(of.map((r) => r.by[c].recallAt1))),
        recallAt5: round3(mean(of.map((r) => r.by[c].recallAt5))),
        mrr: round3(mean(of.map((r) => r.by[c].mrr))),
      });
      return {
        category,
        questions: of.length,
        words: avg('words'),
        meaning: avg('meaning'),
        hybrid: avg('hybrid'),
      };
    };
    return { rows: [...CATEGORIES.map(row), row('all')], misses };
  } finally {
    await database.close();
    await ferret.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
