import type { AnyBulkWriteOperation, Filter } from 'mongodb';
import type { TermStatistics } from '../domain/recall.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import type { FactDoc, FactView, MemoryDoc, MemoryVersionDoc } from './documents.js';
import { allOf, bitemporalFilter, validWindowFilter } from './factFilters.js';
import { FACT_VIEW } from './facts.js';
import { inLiveView, memoriesByIds, memoryFilter } from './memories.js';
import { FACT_ORDER, MEMORY_ORDER } from './orders.js';
import type { Tenant } from './tenant.js';

/**
 * The reads behind ranked recall (domain/recall.ts ranks what they return). A fact
 * recall's statistics are counted from the terms indexes (`factTermStatistics`: the
 * dataset's facts recorded by K, and those holding each term); its candidates are the
 * facts of the view holding one of the question's rarer terms (`factCandidates`), read
 * through the same indexes, at most RECALL_CANDIDATE_CAP, the most recent first. Memories:
 * the documents of the view holding a term, at most RECALL_CANDIDATE_CAP, two commands
 * (docs/RECALL.md, "Ranked recall"). One command for the entities the question may name, and five
 * more when it names one (`entitiesNamed`, `factsMentioning`: its facts as subject and as
 * object, the entities one hop away, theirs as subject and as object).
 */
export const RECALL_CANDIDATE_CAP = 200;

/**
 * How many facts the candidates' terms may hold together: the question's terms are taken
 * rarest first while their facts stay within it (the rarest always), so a question's read
 * is bounded by the budget and not by the dataset. A more frequent term still scores the
 * candidates that hold it.
 */
export const RECALL_POSTINGS_BUDGET = 2000;

/**
 * The most facts read per entity step (a named entity's facts; those one hop away), the
 * most recent first: each costs the embedded database its decoding.
 */
const RECALL_ENTITY_CAP = 50;

/**
 * The instants a recall reads at: T on valid time, K on transaction time (the store's);
 * with `window` (the time a question names: domain/questionTime.ts), what was true at any
 * point of it instead of at T.
 */
export interface RecallInstants {
  validAt: Date;
  knownAt: Date;
  window?: { from: Date | null; until: Date | null };
}

/**
 * The dataset's facts recorded by `knownAt` (every version, superseded ones too) and, per
 * term, how many of them hold it: in their statement, or in their source quote, whichever
 * is more. Counted from the indexes, 1 + 2 × terms commands. Recorded by K, so a replay at
 * K counts what recall counted then.
 */
export async function factTermStatistics(
  db: Collections,
  tenant: Tenant,
  terms: readonly string[],
  knownAt: Date,
): Promise<TermStatistics> {
  const mine = {
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
    recordedAt: { $lte: knownAt },
  };
  const [documents, documentFrequency] = await Promise.all([
    db.facts.countDocuments(mine, { comment: 'store:factTermStatistics' }),
    factTermFrequencies(db, tenant, terms, knownAt),
  ]);
  return { documents, documentFrequency };
}

/** Per term, how many facts recorded by `knownAt` hold it (as factTermStatistics counts). */
export async function factTermFrequencies(
  db: Collections,
  tenant: Tenant,
  terms: readonly string[],
  knownAt: Date,
): Promise<Map<string, number>> {
  const mine = {
    workspaceId: tenant.workspaceId,
    dataset: tenant.dataset,
    recordedAt: { $lte: knownAt },
  };
  const tag = { comment: 'store:factTermStatistics' };
  const counts = await Promise.all(
    terms.flatMap((term) => [
      db.facts.countDocuments({ ...mine, recallTerms: term }, tag),
      db.facts.countDocuments({ ...mine, quoteTerms: term }, tag),
    ]),
  );
  return new Map(terms.map((term, i) => [term, Math.max(counts[2 * i]!, counts[2 * i + 1]!)]));
}

/**
 * Facts that match (T, K) (recorded by K, not invalidated by K, valid at T) and hold one of
 * `terms` (statement or quote), the most recent first, at most RECALL_CANDIDATE_CAP. A
 * fact's text never changes, so the stored terms are the terms it had at K. No terms: no
 * read.
 */
export async function factCandidates(
  db: Collections,
  tenant: Tenant,
  terms: readonly string[],
  at: RecallInstants,
): Promise<FactView[]> {
  if (terms.length === 0) return [];
  return db.facts
    .find<FactView>(
      allOf([
        ...factView(tenant, at),
        // The statement's terms, or the source quote's (recall's second field).
        { $or: [{ recallTerms: { $in: [...terms] } }, { quoteTerms: { $in: [...terms] } }] },
      ]),
      { projection: FACT_VIEW, comment: 'store:factCandidates' },
    )
    .sort(FACT_ORDER)
    .limit(RECALL_CANDIDATE_CAP)
    .batchSize(RECALL_CANDIDATE_CAP)
    .toArray();
}

/**
 * How many facts the recall's view holds, counted up to 2 × RECALL_ENTITY_CAP: what
 * `topicsAmong` needs (an entity is what the dataset is about when more than half the
 * view's facts mention it, and no more than RECALL_ENTITY_CAP of them are read), so the
 * count stops there instead of walking a large view.
 */
export async function factsInView(
  db: Collections,
  tenant: Tenant,
  at: RecallInstants,
): Promise<number> {
  return db.facts.countDocuments(allOf(factView(tenant, at)), {
    limit: 2 * RECALL_ENTITY_CAP,
    comment: 'store:factsInView',
  });
}

/** The facts a recall reads at (T, K), or over its window. */
function factView(tenant: Tenant, at: RecallInstants): Filter<FactDoc>[] {
  return [
    { workspaceId: tenant.workspaceId, dataset: tenant.dataset },
    ...(at.window
      ? validWindowFilter(at.window, at.knownAt)
      : bitemporalFilter(at.validAt, at.knownAt)),
  ];
}

/** The entities of the dataset among `names` (lower-cased, as entities are stored). */
export async function entitiesNamed(
  db: Collections,
  tenant: Tenant,
  names: readonly string[],
): Promise<string[]> {
  if (names.length === 0) return [];
  const found = await db.entities
    .find(
      { workspaceId: tenant.workspaceId, dataset: tenant.dataset, name: { $in: [...names] } },
      { projection: { _id: 0, name: 1 }, comment: 'store:entitiesNamed' },
    )
    // At most one per name, in one batch: with the limit, no getMore to find the end.
    .limit(names.length)
    .batchSize(names.length)
    .toArray();
  return found.map((e) => e.name);
}

/**
 * Facts of the recall's view whose subject or object is one of the entities `names`, the
 * most recent first, at most RECALL_ENTITY_CAP.
 */
export async function factsMentioning(
  db: Collections,
  tenant: Tenant,
  names: readonly string[],
  at: RecallInstants,
): Promise<FactView[]> {
  if (names.length === 0) return [];
  // As subject, and as object, apart: each walks its key's index in the sort's order and
  // stops at the cap, where one `$or` would sort every fact of a hub entity ("user").
  const [asSubject, asObject] = await Promise.all(
    (['subjectKey', 'objectKey'] as const).map((key) =>
      db.facts
        .find<FactView>(allOf([...factView(tenant, at), { [key]: { $in: [...names] } }]), {
          projection: FACT_VIEW,
          comment: 'store:factsMentioning',
        })
        .sort(FACT_ORDER)
        .limit(RECALL_ENTITY_CAP)
        .batchSize(RECALL_ENTITY_CAP)
        .toArray(),
    ),
  );
  const both = new Map([...asSubject!, ...asObject!].map((f) => [f.factId, f]));
  return [...both.values()].sort(newestFactFirst).slice(0, RECALL_ENTITY_CAP);
}

/** FACT_ORDER in code: the later `validAt` first, then the greater `factId`. */
const newestFactFirst = (a: FactView, b: FactView) =>
  b.validAt.getTime() - a.validAt.getTime() ||
  (a.factId < b.factId ? 1 : a.factId > b.factId ? -1 : 0);

/**
 * The memories a recall reads: `live`, SupaCloud's live view now (no instant asked); or a
 * replay at (T, K): every memory as it was at K (the versions made after K undone),
 * created by K, valid at T (`validFrom <= T < validUntil`) and not archived by K.
 */
export type MemoryRecallView = { kind: 'live'; now: Date } | ({ kind: 'replay' } & RecallInstants);

/** The replay view on a memory's values: the same rule as `replayFilter`, in code. */
function inReplayView(memory: MemoryDoc, at: RecallInstants): boolean {
  const valid = at.window
    ? (at.window.until === null || memory.validFrom < at.window.until) &&
      (at.window.from === null || memory.validUntil === null || memory.validUntil > at.window.from)
    : memory.validFrom <= at.validAt &&
      (memory.validUntil === null || memory.validUntil > at.validAt);
  return (
    memory.createdAt <= at.knownAt &&
    valid &&
    (memory.archivedAt === null || memory.archivedAt > at.knownAt)
  );
}

/**
 * The replay view on stored values: exact for every memory no version changed after K.
 * Valid at T, or with a window at any point of it (as facts are).
 */
function replayFilter(tenant: Tenant, at: RecallInstants): Filter<MemoryDoc> {
  const { window } = at;
  const valid: Filter<MemoryDoc>[] = window
    ? [
        ...(window.until ? [{ validFrom: { $lt: window.until } }] : []),
        ...(window.from
          ? [{ $or: [{ validUntil: null }, { validUntil: { $gt: window.from } }] }]
          : []),
      ]
    : [
        { validFrom: { $lte: at.validAt } },
        { $or: [{ validUntil: null }, { validUntil: { $gt: at.validAt } }] },
      ];
  return {
    $and: [
      { workspaceId: tenant.workspaceId, dataset: tenant.dataset },
      { createdAt: { $lte: at.knownAt } },
      ...valid,
      { $or: [{ archivedAt: null }, { archivedAt: { $gt: at.knownAt } }] },
    ],
  };
}

/**
 * A memory as it was before its versions `later` (any order): each version's `before`
 * values put back, the latest first. A version written before `before` was kept cannot be
 * undone: the fields it set keep today's values.
 */
function memoryBefore(
  memory: MemoryDoc,
  later: readonly Pick<MemoryVersionDoc, 'version' | 'before'>[],
): MemoryDoc {
  const then = { ...memory };
  for (const v of [...later].sort((a, b) => b.version - a.version)) {
    if (v.before) Object.assign(then, v.before);
  }
  return then;
}

const MEMORY_NEWEST_FIRST = (a: MemoryDoc, b: MemoryDoc) =>
  b.createdAt.getTime() - a.createdAt.getTime() ||
  (a.memoryId < b.memoryId ? 1 : a.memoryId > b.memoryId ? -1 : 0);

/**
 * Memories of the recall's view that share a term with `query`, and how many the view
 * holds. Live: two commands. Replay: two more when some memory changed after K (its
 * versions since, and the memories they changed, replayed in code: the view and the
 * terms are judged on the memory as it was at K).
 */
export async function memoryCandidates(
  db: Collections,
  tenant: Tenant,
  terms: readonly string[],
  view: MemoryRecallView,
): Promise<{ candidates: MemoryDoc[]; inView: number }> {
  if (terms.length === 0) return { candidates: [], inView: 0 };
  const tag = { comment: 'store:memoryCandidates' };
  const viewFilter =
    view.kind === 'live'
      ? memoryFilter({ ...tenant, asOf: null, now: view.now, includeArchived: false })
      : replayFilter(tenant, view);
  const [candidates, inView, later] = await Promise.all([
    db.memories
      .find({ $and: [viewFilter, { recallTerms: { $in: [...terms] } }] }, tag)
      .sort(MEMORY_ORDER)
      .limit(RECALL_CANDIDATE_CAP)
      .batchSize(RECALL_CANDIDATE_CAP)
      .toArray(),
    db.memories.countDocuments(viewFilter, tag),
    view.kind === 'live'
      ? []
      : db.memoryVersions
          .find(
            {
              workspaceId: tenant.workspaceId,
              dataset: tenant.dataset,
              at: { $gt: view.knownAt },
            },
            { projection: { _id: 0, memoryId: 1, version: 1, before: 1 }, ...tag },
          )
          .batchSize(UNPAGED_BATCH_SIZE)
          .toArray(),
  ]);
  if (view.kind === 'live' || later.length === 0) return { candidates, inView };

  // Memories changed after K: judged as they were at K, not by their stored values.
  const versionsOf = new Map<string, typeof later>();
  for (const v of later) versionsOf.set(v.memoryId, [...(versionsOf.get(v.memoryId) ?? []), v]);
  const stored = await memoriesByIds(db, tenant, [...versionsOf.keys()]);
  let counted = inView;
  const replayed: MemoryDoc[] = [];
  for (const [memoryId, memory] of stored) {
    const then = memoryBefore(memory, versionsOf.get(memoryId)!);
    if (inReplayView(memory, view)) counted--;
    if (inReplayView(then, view)) {
      counted++;
      if (then.recallTerms.some((t) => terms.includes(t))) replayed.push(then);
    }
  }
  const merged = [...candidates.filter((m) => !stored.has(m.memoryId)), ...replayed]
    .sort(MEMORY_NEWEST_FIRST)
    .slice(0, RECALL_CANDIDATE_CAP);
  return { candidates: merged, inView: counted };
}

/**
 * Stamps `lastUsedAt` on recalled memories, in one unordered write. Only a memory still at
 * the version that was read is stamped, so a stamp never lands on a newer version's
 * write (docs/COMPATIBILITY.md).
 */
export async function markMemoriesUsed(
  db: Collections,
  tenant: Tenant,
  memories: readonly Pick<MemoryDoc, '_id' | 'version'>[],
  now: Date,
): Promise<void> {
  if (memories.length === 0) return;
  const ops: AnyBulkWriteOperation<MemoryDoc>[] = memories.map((m) => ({
    updateOne: {
      filter: {
        _id: m._id,
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        version: m.version,
      },
      update: { $set: { lastUsedAt: now } },
    },
  }));
  await db.memories.bulkWrite(ops, { ordered: false, comment: 'store:markMemoriesUsed' });
}

/**
 * The facts of the recall's view among `ids` (document ids, the dense leg's hits): the
 * same view as the candidates of the words leg, so what a vector finds is what the store's
 * view holds at (T, K), never the index's.
 */
export async function factsOfIdsInView(
  db: Collections,
  tenant: Tenant,
  ids: readonly string[],
  at: RecallInstants,
): Promise<FactView[]> {
  if (ids.length === 0) return [];
  return db.facts
    .find<FactView>(allOf([...factView(tenant, at), { _id: { $in: [...ids] } }]), {
      projection: FACT_VIEW,
      comment: 'store:factsOfIdsInView',
    })
    .batchSize(ids.length)
    .toArray();
}

/**
 * The memories of the recall's view among `ids` (the dense leg's hits), and, on a replay,
 * every memory changed after K as it was then (`replayed`: its vector then is not the
 * index's, so each is judged by its own), which `found` leaves out. Read by id (one index
 * search each) and judged by the view's rules in code, `inLiveView` and `inReplayView`,
 * the same rules the words leg's filters state.
 */
export async function memoriesOfIdsInView(
  db: Collections,
  tenant: Tenant,
  ids: readonly string[],
  view: MemoryRecallView,
): Promise<{ found: MemoryDoc[]; replayed: MemoryDoc[] }> {
  const tag = { comment: 'store:memoriesOfIdsInView' };
  const inView = (m: MemoryDoc) =>
    view.kind === 'live' ? inLiveView(m, view.now) : inReplayView(m, view);
  const [read, later] = await Promise.all([
    ids.length === 0
      ? []
      : db.memories
          .find(
            { _id: { $in: [...ids] }, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
            tag,
          )
          .batchSize(ids.length)
          .toArray(),
    view.kind === 'live'
      ? []
      : db.memoryVersions
          .find(
            { workspaceId: tenant.workspaceId, dataset: tenant.dataset, at: { $gt: view.knownAt } },
            { projection: { _id: 0, memoryId: 1, version: 1, before: 1 }, ...tag },
          )
          .batchSize(UNPAGED_BATCH_SIZE)
          .toArray(),
  ]);
  const found = read.filter(inView);
  if (view.kind === 'live' || later.length === 0) return { found, replayed: [] };
  const versionsOf = new Map<string, typeof later>();
  for (const v of later) versionsOf.set(v.memoryId, [...(versionsOf.get(v.memoryId) ?? []), v]);
  const stored = await memoriesByIds(db, tenant, [...versionsOf.keys()]);
  const replayed = [...stored]
    .map(([memoryId, memory]) => memoryBefore(memory, versionsOf.get(memoryId)!))
    .filter(inView);
  return { found: found.filter((m) => !versionsOf.has(m.memoryId)), replayed };
}
