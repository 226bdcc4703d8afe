import type { AnyBulkWriteOperation, Filter } from 'mongodb';
import { systemClock } from '../clock.js';
import { entityKey, predicateKey } from '../domain/names.js';
import { derivePairHistory, type FactRun, rootFactId } from '../domain/pairHistory.js';
import { factText } from '../domain/recallTerms.js';
import { isOnlyDuplicateKeys } from './bulkErrors.js';
import {
  appendChanges,
  HISTORY_CHANGE,
  type NewChange,
  redactFactChangesExcept,
} from './changes.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE, UPSERTS_PER_COMMAND } from './database.js';
import type { Embedded, EmbeddedField } from './documents.js';
import {
  type FactDoc,
  type FactFields,
  type FactRecordDoc,
  factDocument,
  factDocumentId,
  STATEMENT_FIELDS,
} from './documents.js';
import { embeddedWith, type StatementVectors } from './embeddings.js';
import {
  type Pair,
  pairKey,
  pairRecordOf,
  recordIdsOfPairs,
  recordsOfPairs,
} from './factRecords.js';
import type { Tenant } from './tenant.js';

/**
 * Materialising a pair: its fact documents made exactly what domain/pairHistory.ts derives
 * from its records (docs/TEMPORAL_MODEL.md, "The history is derived"). Every write path
 * (recording, delete, restore, erasure, import, migration, repair) appends or removes
 * records and then calls `materialisePairs`; none stamps a fact by hand.
 *
 * Safe without transactions (docs/TEMPORAL_MODEL.md, "Writes without transactions"): the
 * documents' ids and contents are functions of the records, so materialising twice writes
 * the same documents, and each document is written whole (no two writers update different
 * fields of one). A round reads the records, derives, reads the documents and writes the
 * difference; the call ends only when a round sees its writes through: the records read
 * again are the ones it derived from and the documents read again are what it derived. So
 * of racing writers each ends on the history of every record it could see, and a writer
 * whose records went stale meanwhile goes round again; a write that a fault cut short is
 * completed by its retry, by the next materialisation of the pair, or by the start-up
 * repair (records stay `materialised: false` until a round sees them through).
 *
 * Within a round, what stops being believed is written first (removals and the documents
 * a round closes), then what starts (new documents and the rest), so a reader between the
 * two sees a moment with less, never two values the records do not hold.
 */

export interface MaterialiseOptions {
  /** Append the changes the history tells (an import and a migration do not). */
  feed: boolean;
  /**
   * Redact the pairs' history changes that the history no longer tells: a supersession by
   * an erased fact, or a version a racing writer derived from records that a record with
   * an earlier instant, stored later, has since changed.
   */
  redact: boolean;
  /** Changes the write itself tells, appended before the history's (with `feed`). */
  preface?: readonly NewChange[];
  /**
   * The vectors of statements the write knows (by `factText`): a document written with one
   * is stored embedded, so no later update is needed (store/embeddings.ts).
   */
  vectors?: StatementVectors;
}

export interface Materialised {
  /**
   * The pairs' documents that could change (all of them for an erasure, an import or a
   * migration; the runs open at the earliest unseen record for a write at the tail),
   * before the first write of this call.
   */
  before: FactDoc[];
  /** The same documents as derived, now stored (without their terms). */
  after: DerivedDoc[];
  /** Documents this call inserted, replaced or removed. */
  written: number;
}

/** Pairs a round takes at once: bounded reads, whatever an import holds. */
const PAIRS_PER_ROUND = 200;

/** Rounds a call makes before giving up: each lost round means another writer's record landed. */
const MAX_ROUNDS = 25;

/** The fields materialisation derives and compares (the terms derive from the statement). */
const COMPARED = [
  'factId',
  ...STATEMENT_FIELDS,
  'episodeId',
  'validAt',
  'validUntil',
  'recordedAt',
  'invalidAt',
  'invalidReason',
  'supersededBy',
  'replaceExisting',
  'correctionOf',
  'correctedBy',
  'subjectKey',
  'objectKey',
  'predicateKey',
] as const satisfies readonly (keyof FactDoc)[];

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  return (a ?? null) === (b ?? null);
};

const sameDocument = (a: DerivedDoc, b: DerivedDoc) => COMPARED.every((k) => sameValue(a[k], b[k]));

/** Whether a document as a write stated it is the one the derivation stored (an import's line). */
export const storedAsStated = (stated: DerivedDoc, stored: DerivedDoc | undefined): boolean =>
  stored !== undefined && sameDocument(stated, stored);

/** Makes the pairs' fact documents what their records derive, and tells it in the feed. */
export async function materialisePairs(
  db: Collections,
  tenant: Tenant,
  pairs: readonly Pair[],
  options: MaterialiseOptions,
): Promise<Materialised> {
  const out: Materialised = { before: [], after: [], written: 0 };
  for (let i = 0; i < pairs.length; i += PAIRS_PER_ROUND) {
    const part = await materialiseSome(db, tenant, pairs.slice(i, i + PAIRS_PER_ROUND), options);
    out.before.push(...part.before);
    out.after.push(...part.after);
    out.written += part.written;
  }
  return out;
}

/**
 * The records that count: none of an episode being erased (an `erased` record of the
 * pair names it), nor the erasure's own. A delete or restore of an erased fact, or a
 * said-wrong of one, is left out by the derivation, which ignores records of facts not
 * asserted.
 */
function counted(records: readonly FactRecordDoc[]): FactRecordDoc[] {
  const erasing = new Set(
    records.flatMap((r) =>
      r.kind === 'erased' ? [JSON.stringify([pairKey(r), r.episodeId])] : [],
    ),
  );
  if (erasing.size === 0) return [...records];
  return records.filter(
    (r) =>
      r.kind !== 'erased' &&
      !(
        (r.kind === 'asserted' || r.kind === 'saidWrong') &&
        erasing.has(JSON.stringify([pairKey(r), r.episodeId]))
      ),
  );
}

/** One pair's history from its records, as materialising it derives it. */
export function historyOfRecords(records: readonly FactRecordDoc[]): FactRun[] {
  return derivePairHistory(counted(records).map(pairRecordOf));
}

/**
 * A derived document as materialisation compares it: every field but the terms and the
 * vector, which derive from the statement alone: the terms are computed (by
 * `factDocument`) only for the documents written, and a rewritten document keeps the
 * vector it had (its statement is the same: a document's id names its fact's run).
 */
type DerivedDoc = Omit<FactDoc, 'recallTerms' | 'quoteTerms' | EmbeddedField>;

/** The fields a run's document is built from: its fact's record, the run's times. */
function runFields(record: FactRecordDoc, run: FactRun): FactFields {
  const { replaceExisting, ...statement } = record.fact!;
  return {
    ...statement,
    factId: run.id,
    episodeId: record.episodeId,
    validAt: run.validAt,
    validUntil: run.validUntil,
    recordedAt: run.recordedAt,
    invalidAt: run.invalidAt,
    invalidReason: run.invalidReason,
    supersededBy: run.supersededBy,
    replaceExisting,
    correctionOf: run.correctionOf,
    correctedBy: run.correctedBy,
  };
}

/**
 * The pairs' history as derived from their records: the documents (without their terms)
 * and the runs, and the whole document of each (`build`). Pure; `bench/import.ts` states
 * with it what an import stores.
 */
export function derive(
  tenant: Tenant,
  records: readonly FactRecordDoc[],
): { docs: Map<string, DerivedDoc>; runs: FactRun[]; build: (id: string) => FactDoc } {
  const byPair = new Map<string, FactRecordDoc[]>();
  for (const r of counted(records)) {
    const key = pairKey(r);
    const list = byPair.get(key);
    if (list) list.push(r);
    else byPair.set(key, [r]);
  }
  const docs = new Map<string, DerivedDoc>();
  const fields = new Map<string, FactFields>();
  const runs: FactRun[] = [];
  for (const list of byPair.values()) {
    const asserted = new Map(list.filter((r) => r.kind === 'asserted').map((r) => [r.factId, r]));
    for (const run of derivePairHistory(list.map(pairRecordOf))) {
      const f = runFields(asserted.get(run.factId)!, run);
      const _id = factDocumentId(tenant, f.factId);
      docs.set(_id, {
        _id,
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        ...f,
        correctionOf: f.correctionOf ?? null,
        correctedBy: f.correctedBy ?? null,
        subjectKey: entityKey(f.subject),
        objectKey: entityKey(f.object),
        predicateKey: predicateKey(f.predicate),
      });
      fields.set(_id, f);
      runs.push(run);
    }
  }
  return { docs, runs, build: (id) => factDocument(tenant, fields.get(id)!) };
}

/**
 * The stored documents a materialisation compares and rewrites: those the records not yet
 * seen through by a materialisation can change. A run that ended before the earliest of
 * them (`from`) depends on earlier records only, seen through already; a run still
 * believed changes only if one of them ends it earlier (a fact valid from before its end,
 * `validFrom`) or is about its fact (a delete, a restore, a said-wrong: `facts`). So a
 * write at the tail of a long history reads a few documents, not the history. An erasure
 * in progress removes records of any instant: everything is in view.
 */
interface View {
  whole: boolean;
  from: number;
  validFrom: number;
  facts: Set<string>;
}

function viewOf(records: readonly FactRecordDoc[], previous?: View): View {
  const view: View = previous
    ? { ...previous, facts: new Set(previous.facts) }
    : {
        whole: false,
        from: Number.POSITIVE_INFINITY,
        validFrom: Number.POSITIVE_INFINITY,
        facts: new Set(),
      };
  for (const r of records) {
    if (r.materialised) continue;
    if (r.kind === 'erased') view.whole = true;
    view.from = Math.min(view.from, r.at.getTime());
    if (r.kind === 'asserted') {
      view.validFrom = Math.min(view.validFrom, r.fact!.validAt.getTime());
    } else {
      view.facts.add(r.factId);
    }
  }
  return view;
}

const empty = (view: View) => !view.whole && view.from === Number.POSITIVE_INFINITY;

/** Whether a document is in view (the same test as documentsInView's query). */
function inView(d: DerivedDoc, view: View): boolean {
  if (view.whole) return true;
  if (empty(view)) return false;
  if (d.recordedAt.getTime() >= view.from) return true;
  if (d.invalidAt !== null) return d.invalidAt.getTime() >= view.from;
  return (
    d.validUntil === null ||
    d.validUntil.getTime() > view.validFrom ||
    view.facts.has(rootFactId(d))
  );
}

/** The pairs' stored fact documents in view (their terms left in the database). */
async function documentsInView(
  db: Collections,
  tenant: Tenant,
  pairs: readonly Pair[],
  view: View,
): Promise<FactDoc[]> {
  if (empty(view)) return [];
  const wanted = new Set(pairs.map(pairKey));
  const from = new Date(view.from);
  const facts = [...view.facts];
  const believed: Filter<FactDoc>[] = [{ invalidAt: null, validUntil: null }];
  if (view.validFrom !== Number.POSITIVE_INFINITY) {
    believed.push({ invalidAt: null, validUntil: { $gt: new Date(view.validFrom) } });
  }
  if (facts.length > 0) {
    believed.push({ invalidAt: null, factId: { $in: facts } });
    believed.push({ invalidAt: null, correctionOf: { $in: facts } });
  }
  const docs = await db.facts
    .find(
      {
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        subjectKey: { $in: [...new Set(pairs.map((p) => p.subjectKey))] },
        predicateKey: { $in: [...new Set(pairs.map((p) => p.predicateKey))] },
        ...(view.whole
          ? {}
          : {
              $or: [{ recordedAt: { $gte: from } }, { invalidAt: { $gte: from } }, ...believed],
            }),
      },
      { comment: 'store:documentsOfPairs', projection: { recallTerms: 0, quoteTerms: 0 } },
    )
    .batchSize(UNPAGED_BATCH_SIZE)
    .toArray();
  return docs.filter((d) => wanted.has(pairKey(d)));
}

/** The derived documents in view: those the stored ones are compared with. */
function derivedInView(docs: Map<string, DerivedDoc>, view: View) {
  if (view.whole) return docs;
  return new Map([...docs].filter(([, d]) => inView(d, view)));
}

interface Plan {
  remove: string[];
  /** Documents that stop being believed: written with the removals. */
  closing: DerivedDoc[];
  insert: DerivedDoc[];
  replace: DerivedDoc[];
  /** The vectors of stored documents rewritten: kept (the statement is the same). */
  vectors: Map<string, Embedded>;
}

/**
 * What to write so that the stored documents in view are as derived: a stored one the
 * history does not hold goes, one that differs is rewritten, and a derived one in view
 * (`inView`) that is not stored is inserted (those out of view were seen through before).
 */
function planOf(
  stored: readonly FactDoc[],
  derived: Map<string, DerivedDoc>,
  inView: Map<string, DerivedDoc>,
): Plan {
  const plan: Plan = { remove: [], closing: [], insert: [], replace: [], vectors: new Map() };
  const there = new Map(stored.map((d) => [d._id, d]));
  for (const d of stored) {
    const doc = derived.get(d._id);
    if (!doc) plan.remove.push(d._id);
    else if (!sameDocument(d, doc)) {
      (doc.invalidAt !== null && d.invalidAt === null ? plan.closing : plan.replace).push(doc);
      if (d.embedded) {
        plan.vectors.set(d._id, {
          embedded: true,
          embedding: d.embedding ?? null,
          embeddedAt: d.embeddedAt ?? null,
        });
      }
    }
  }
  for (const [id, doc] of inView) if (!there.has(id)) plan.insert.push(doc);
  return plan;
}

const planSize = (p: Plan) =>
  p.remove.length + p.closing.length + p.insert.length + p.replace.length;

async function replaceWhole(db: Collections, tenant: Tenant, docs: readonly FactDoc[]) {
  const ops: AnyBulkWriteOperation<FactDoc>[] = docs.map((doc) => ({
    replaceOne: {
      filter: { _id: doc._id, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
      replacement: doc,
      upsert: true,
    },
  }));
  // A few to a command (see UPSERTS_PER_COMMAND).
  for (let i = 0; i < ops.length; i += UPSERTS_PER_COMMAND) {
    try {
      await db.facts.bulkWrite(ops.slice(i, i + UPSERTS_PER_COMMAND), {
        ordered: false,
        comment: 'store:materialise',
      });
    } catch (error) {
      // Two upserts racing to insert one document: the next round reads what is there.
      if (!isOnlyDuplicateKeys(error)) throw error;
    }
  }
}

async function writePlan(
  db: Collections,
  tenant: Tenant,
  plan: Plan,
  build: (id: string) => FactDoc,
): Promise<void> {
  const scope = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };
  const rewritten = (id: string): FactDoc => ({ ...build(id), ...plan.vectors.get(id) });
  if (plan.remove.length > 0) {
    await db.facts.deleteMany(
      { _id: { $in: plan.remove }, ...scope },
      { comment: 'store:materialise' },
    );
  }
  await replaceWhole(
    db,
    tenant,
    plan.closing.map((d) => rewritten(d._id)),
  );
  if (plan.insert.length > 0) {
    try {
      await db.facts.insertMany(
        plan.insert.map((d) => build(d._id)),
        { ordered: false, comment: 'store:materialise' },
      );
    } catch (error) {
      // Inserted meanwhile by a racing writer: the round's check reads what it holds.
      if (!isOnlyDuplicateKeys(error)) throw error;
    }
  }
  await replaceWhole(
    db,
    tenant,
    plan.replace.map((d) => rewritten(d._id)),
  );
}

/**
 * A document builder that stores a statement's vector when it is known: given by the
 * write, or held by a stored document of the same statement (a new version of a fact, a
 * restored one, has its fact's statement), so a new document needs no update after.
 */
function withVectors(
  build: (id: string) => FactDoc,
  vectors: StatementVectors | undefined,
  stored: readonly FactDoc[],
): (id: string) => FactDoc {
  const held = new Map<string, Embedded>();
  for (const d of stored) {
    if (d.embedded && d.embedding) {
      held.set(factText(d), {
        embedded: true,
        embedding: d.embedding,
        embeddedAt: d.embeddedAt ?? null,
      });
    }
  }
  if (held.size === 0 && (!vectors || vectors.size === 0)) return build;
  const at = systemClock();
  return (id) => {
    const doc = build(id);
    const text = factText(doc);
    const vector = vectors?.get(text);
    if (vector) return { ...doc, ...embeddedWith(vector, at) };
    const copied = held.get(text);
    // Stamped now: this document is new to the vector indexes of every process.
    return copied ? { ...doc, ...copied, embeddedAt: at } : doc;
  };
}

const idSetKey = (ids: readonly string[]) => [...ids].sort().join(',');

async function materialiseSome(
  db: Collections,
  tenant: Tenant,
  pairs: readonly Pair[],
  options: MaterialiseOptions,
): Promise<Materialised> {
  let records = await recordsOfPairs(db, tenant, pairs);
  // Only ever wider, round after round: what this call may have written stays in view.
  let view = viewOf(records);
  let stored = await documentsInView(db, tenant, pairs, view);
  const before = stored;
  let written = 0;
  // Every fact and version id this call has seen stored, derived or told, round after
  // round: its redactions look for changes by them. A racing writer may remove the
  // document of a version this call derived (and told) before a record with an earlier
  // instant landed, so the documents of a later round alone no longer name it.
  const known = new Set<string>();
  const know = (docs: Iterable<DerivedDoc>) => {
    for (const d of docs) known.add(d.factId).add(rootFactId(d));
  };
  // Set when a record arrived after this call wrote documents or told changes: the next
  // round redacts what its derivation no longer tells, though its documents may already
  // be as derived (a racing writer wrote them, and redacted before this call's changes
  // were there).
  let redactAgain = false;
  let wrote = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const derived = derive(tenant, records);
    const viewed = derivedInView(derived.docs, view);
    const plan = planOf(stored, derived.docs, viewed);
    know(stored);
    know(viewed.values());
    // The changes that history no longer tells go before the documents that stop telling
    // them, so a retry after a fault still finds them by the documents it reads.
    if (options.redact && (planSize(plan) > 0 || redactAgain)) {
      await redactFactChangesExcept(
        db,
        tenant,
        [...known],
        new Set(historyChanges(derived.runs, records).map((c) => c.changeId)),
      );
      redactAgain = false;
    }
    if (planSize(plan) > 0) {
      await writePlan(db, tenant, plan, withVectors(derived.build, options.vectors, stored));
      written += planSize(plan);
      wrote = true;
    }
    // Seen through: the records are still those it derived from, the documents as derived.
    const again = await recordIdsOfPairs(db, tenant, pairs);
    const changed = idSetKey(again) !== idSetKey(records.map((r) => r._id));
    if (changed) {
      records = await recordsOfPairs(db, tenant, pairs);
      view = viewOf(records, view);
      // What this call wrote may be what the new records no longer tell.
      if (wrote) redactAgain = true;
    }
    stored = await documentsInView(db, tenant, pairs, view);
    if (changed || planSize(planOf(stored, derived.docs, derivedInView(derived.docs, view))) > 0) {
      continue;
    }

    if (options.feed) {
      // What happened before the view was told by the materialisation that saw its records
      // through (it appends before it marks them seen), so only the view's changes are new.
      const told = historyChanges(derived.runs, records).filter(
        (c) => view.whole || c.at.getTime() >= view.from,
      );
      for (const c of told) if (c.factId) known.add(c.factId);
      await appendChanges(db, tenant, [...(options.preface ?? []), ...told]);
      wrote = true;
      // A record stored after the check above and before this append, by a writer whose
      // redaction ran before it, leaves one of these changes stale: read the ids again;
      // if they moved, go round once more (appending again is idempotent), redacting by
      // the ids told here too (`known`): the documents that held them may be gone.
      const arrived = await recordIdsOfPairs(db, tenant, pairs);
      if (idSetKey(arrived) !== idSetKey(records.map((r) => r._id))) {
        records = await recordsOfPairs(db, tenant, pairs);
        view = viewOf(records, view);
        stored = await documentsInView(db, tenant, pairs, view);
        redactAgain = true;
        continue;
      }
    }
    const unseen = records.filter((r) => !r.materialised).map((r) => r._id);
    if (unseen.length > 0) {
      await db.factRecords.updateMany(
        { _id: { $in: unseen }, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
        { $set: { materialised: true } },
        { comment: 'store:materialise' },
      );
    }
    return { before, after: [...derivedInView(derived.docs, view).values()], written };
  }
  throw new Error(`the history of ${pairs.length} pair(s) did not settle in ${MAX_ROUNDS} rounds`);
}

/**
 * The changes a history tells, each keyed by what made it, so every materialisation of the
 * same records appends the same ones (and the feed takes each once): a delete, a restore
 * or a said-wrong by its record; a supersession by a successor by the document it ended
 * and the instant; a corrected version by its document.
 */
function historyChanges(runs: readonly FactRun[], records: readonly FactRecordDoc[]) {
  const changes: NewChange[] = [];
  const asserted = new Map(
    counted(records)
      .filter((r) => r.kind === 'asserted')
      .map((r) => [r.factId, r]),
  );
  // A change is told when what caused it was: the successor that ended or corrected a
  // run, or the delete, restore or said-wrong record itself.
  const told = (factId: string | null) => factId === null || !asserted.get(factId)?.untold;
  for (const run of runs) {
    const episodeId = asserted.get(run.factId)?.episodeId ?? null;
    if (
      run.endedBy === 'successor' &&
      run.invalidAt &&
      run.invalidAt > run.recordedAt &&
      told(run.supersededBy)
    ) {
      changes.push({
        changeId: `${HISTORY_CHANGE}superseded:${run.id}@${run.invalidAt.toISOString()}`,
        kind: 'FACT_SUPERSEDED',
        at: run.invalidAt,
        factId: run.id,
        episodeId,
      });
    }
    if (run.startedBy === 'correction' && told(run.correctedBy)) {
      changes.push({
        changeId: `${HISTORY_CHANGE}corrected:${run.id}`,
        kind: 'FACT_CORRECTED',
        at: run.recordedAt,
        factId: run.id,
        episodeId,
      });
    }
  }
  for (const r of counted(records)) {
    if (r.kind === 'asserted' || r.untold || !asserted.has(r.factId)) continue;
    const kind =
      r.kind === 'deleted'
        ? 'FACT_DELETED'
        : r.kind === 'restored'
          ? 'FACT_RESTORED'
          : 'FACT_SUPERSEDED';
    changes.push({
      changeId: `${HISTORY_CHANGE}${r.kind}:${r._id}`,
      kind,
      at: r.at,
      factId: r.factId,
      episodeId: asserted.get(r.factId)!.episodeId,
    });
  }
  return changes.sort(
    (a, b) => a.at.getTime() - b.at.getTime() || (a.changeId < b.changeId ? -1 : 1),
  );
}

/**
 * Removes the records of the erasures in progress on the pairs (`erased` records, and the
 * records of their episodes and of those episodes' facts), once the pairs are derived
 * without them. Returns how many it removed.
 */
export async function removeErasedRecords(
  db: Collections,
  tenant: Tenant,
  pairs: readonly Pair[],
): Promise<number> {
  const records = await recordsOfPairs(db, tenant, pairs);
  const erasing = new Set(records.flatMap((r) => (r.kind === 'erased' ? [r.episodeId] : [])));
  if (erasing.size === 0) return 0;
  const facts = new Set(
    records.filter((r) => r.kind === 'asserted' && erasing.has(r.episodeId)).map((r) => r.factId),
  );
  const ids = records
    .filter((r) => (r.episodeId !== null && erasing.has(r.episodeId)) || facts.has(r.factId))
    .map((r) => r._id);
  const { deletedCount } = await db.factRecords.deleteMany(
    { _id: { $in: ids }, workspaceId: tenant.workspaceId, dataset: tenant.dataset },
    { comment: 'store:removeErasedRecords' },
  );
  return deletedCount;
}

/** Materialises the pairs whose records a fault left unseen (run at start-up). */
export async function repairFactHistories(db: Collections): Promise<number> {
  const pending = await db.factRecords
    .find(
      { materialised: false },
      {
        projection: { workspaceId: 1, dataset: 1, subjectKey: 1, predicateKey: 1 },
        comment: 'store:repairFactHistories',
      },
    )
    .toArray();
  const byTenant = new Map<string, { tenant: Tenant; pairs: Map<string, Pair> }>();
  for (const r of pending) {
    const key = JSON.stringify([r.workspaceId, r.dataset]);
    let entry = byTenant.get(key);
    if (!entry) {
      entry = { tenant: { workspaceId: r.workspaceId, dataset: r.dataset }, pairs: new Map() };
      byTenant.set(key, entry);
    }
    entry.pairs.set(pairKey(r), { subjectKey: r.subjectKey, predicateKey: r.predicateKey });
  }
  for (const { tenant, pairs } of byTenant.values()) {
    // An erasure cut short is among them: its records marked erased count for nothing,
    // and the changes only they told are redacted.
    await materialisePairs(db, tenant, [...pairs.values()], { feed: true, redact: true });
    await removeErasedRecords(db, tenant, [...pairs.values()]);
  }
  return pending.length;
}
