import { normalizeUuid } from '../domain/ids.js';
import { entityKey, predicateKey } from '../domain/names.js';
import {
  type AssertedFact,
  compareAsserted,
  endsFact,
  type PairRecord,
  rootFactId,
} from '../domain/pairHistory.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import {
  type AssertedStatement,
  type FactDoc,
  type FactRecordDoc,
  factRecordId,
} from './documents.js';
import type { Tenant } from './tenant.js';

/**
 * The records of a pair's history (documents.ts `FactRecordDoc`): how each write path
 * builds them, and how the materialisation reads them (store/materialise.ts).
 */

/** A subject and predicate, by their stored keys. */
export interface Pair {
  subjectKey: string;
  predicateKey: string;
}

export const pairKey = (p: Pair) => JSON.stringify([p.subjectKey, p.predicateKey]);

/** The pair a statement belongs to. */
const pairOf = (f: { subject: string; predicate: string }): Pair => ({
  subjectKey: entityKey(f.subject),
  predicateKey: predicateKey(f.predicate),
});

/** The distinct pairs among `pairs`. */
export function distinctPairs(pairs: Iterable<Pair>): Pair[] {
  const byKey = new Map<string, Pair>();
  for (const p of pairs)
    byKey.set(pairKey(p), { subjectKey: p.subjectKey, predicateKey: p.predicateKey });
  return [...byKey.values()];
}

const scoped = (tenant: Tenant, pair: Pair) => ({
  workspaceId: tenant.workspaceId,
  dataset: tenant.dataset,
  subjectKey: pair.subjectKey,
  predicateKey: pair.predicateKey,
});

/** A fact as asserted, recorded at `at`. */
export function assertedRecord(
  tenant: Tenant,
  fact: { factId: string; episodeId: string | null; at: Date } & AssertedStatement,
): FactRecordDoc {
  const factId = normalizeUuid(fact.factId);
  return {
    _id: factRecordId(tenant, 'asserted', factId),
    ...scoped(tenant, pairOf(fact)),
    kind: 'asserted',
    factId,
    episodeId: fact.episodeId === null ? null : normalizeUuid(fact.episodeId),
    by: null,
    generation: null,
    at: fact.at,
    fact: {
      subject: fact.subject,
      predicate: fact.predicate,
      object: fact.object,
      objectIsEntity: fact.objectIsEntity,
      confidence: fact.confidence,
      sourceQuote: fact.sourceQuote,
      validAt: fact.validAt,
      validUntil: fact.validUntil,
      replaceExisting: fact.replaceExisting,
    },
    materialised: false,
  };
}

/** `factId` (of `pair`) said wrong by `by` (of `episodeId`), at `by`'s recording. */
export function saidWrongRecord(
  tenant: Tenant,
  pair: Pair,
  target: { factId: string; by: string | null; episodeId: string | null; at: Date },
): FactRecordDoc {
  const factId = normalizeUuid(target.factId);
  const by = target.by === null ? null : normalizeUuid(target.by);
  return {
    _id: factRecordId(tenant, 'saidWrong', factId, by ?? ''),
    ...scoped(tenant, pair),
    kind: 'saidWrong',
    factId,
    episodeId: target.episodeId,
    by,
    generation: null,
    at: target.at,
    fact: null,
    materialised: false,
  };
}

/**
 * The `generation`-th delete or restore of `factId`. Its `_id` is the claim: a fact is
 * deleted at most once per generation, and restored at most once per delete.
 */
export function lifecycleRecord(
  tenant: Tenant,
  pair: Pair,
  kind: 'deleted' | 'restored',
  factId: string,
  generation: number,
  at: Date,
): FactRecordDoc {
  const id = normalizeUuid(factId);
  return {
    _id: factRecordId(tenant, kind, id, String(generation)),
    ...scoped(tenant, pair),
    kind,
    factId: id,
    episodeId: null,
    by: null,
    generation,
    at,
    fact: null,
    materialised: false,
  };
}

/** An erasure of `episodeId` in progress on `pair` (store/erasure.ts). */
export function erasureRecord(
  tenant: Tenant,
  pair: Pair,
  episodeId: string,
  at: Date,
): FactRecordDoc {
  return {
    _id: factRecordId(tenant, 'erased', episodeId, pair.subjectKey, pair.predicateKey),
    ...scoped(tenant, pair),
    kind: 'erased',
    factId: '',
    episodeId,
    by: null,
    generation: null,
    at,
    fact: null,
    materialised: false,
  };
}

/** What the domain function reads of a record (never an `erased` one: store/materialise.ts). */
export function pairRecordOf(doc: FactRecordDoc): PairRecord {
  switch (doc.kind) {
    case 'asserted':
      return {
        kind: 'asserted',
        fact: {
          factId: doc.factId,
          episodeId: doc.episodeId,
          validAt: doc.fact!.validAt,
          validUntil: doc.fact!.validUntil,
          replaceExisting: doc.fact!.replaceExisting,
          at: doc.at,
        },
      };
    case 'saidWrong':
      return { kind: 'saidWrong', factId: doc.factId, by: doc.by, at: doc.at };
    case 'deleted':
    case 'restored':
      return { kind: doc.kind, factId: doc.factId, at: doc.at };
    case 'erased':
      throw new Error('an erasure record is not part of a history');
  }
}

/**
 * Every record of the given pairs, in one query (every subject with every predicate, a
 * fixed shape the pair index serves; the combinations that are not pairs are dropped).
 */
export async function recordsOfPairs(
  db: Collections,
  tenant: Tenant,
  pairs: readonly Pair[],
): Promise<FactRecordDoc[]> {
  return readRecordsOfPairs(db, tenant, pairs);
}

/**
 * The ids of the pairs' records: what a materialisation reads again to see its write
 * through (a record added or removed meanwhile changes them; a record never changes but
 * for its `materialised` flag).
 */
export async function recordIdsOfPairs(
  db: Collections,
  tenant: Tenant,
  pairs: readonly Pair[],
): Promise<string[]> {
  const docs = await readRecordsOfPairs<Pick<FactRecordDoc, '_id' | 'subjectKey' | 'predicateKey'>>(
    db,
    tenant,
    pairs,
    { _id: 1, subjectKey: 1, predicateKey: 1 },
  );
  return docs.map((d) => d._id);
}

async function readRecordsOfPairs<T extends Pair = FactRecordDoc>(
  db: Collections,
  tenant: Tenant,
  pairs: readonly Pair[],
  projection?: Record<string, 1>,
): Promise<T[]> {
  if (pairs.length === 0) return [];
  const wanted = new Set(pairs.map(pairKey));
  const docs = await db.factRecords
    .find<T>(
      {
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        subjectKey: { $in: [...new Set(pairs.map((p) => p.subjectKey))] },
        predicateKey: { $in: [...new Set(pairs.map((p) => p.predicateKey))] },
      },
      { comment: 'store:recordsOfPairs', ...(projection ? { projection } : {}) },
    )
    .batchSize(UNPAGED_BATCH_SIZE)
    .toArray();
  return docs.filter((d) => wanted.has(pairKey(d)));
}

/**
 * The records that a pair's stored documents imply, for documents written without records
 * (an import file, a store from before the history was derived): each fact as first
 * recorded is asserted at its `recordedAt`, with the `validUntil` it was stored with; a
 * document deleted is a delete at its `invalidAt`; a version with no successor naming
 * its end is a restore at its `recordedAt`; a document superseded by a fact that does
 * not end it by the rule (or that `listed` says listed it in `supersedes`) was said wrong
 * by that fact. What a successor's rule implies (a supersession, a corrected version) is
 * left to the derivation. `listed` holds `[lister, listed]` keys (JSON) where known.
 */
export function recordsFromFactDocs(
  docs: readonly FactDoc[],
  listed: ReadonlySet<string> = new Set(),
): FactRecordDoc[] {
  const groups = new Map<string, FactDoc[]>();
  for (const d of docs) {
    const key = JSON.stringify([d.workspaceId, d.dataset, rootFactId(d)]);
    const group = groups.get(key);
    if (group) group.push(d);
    else groups.set(key, [d]);
  }
  const assertedOf = new Map<string, AssertedFact>();
  const records: FactRecordDoc[] = [];
  for (const group of groups.values()) {
    group.sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime());
    const first = group.find((d) => !d.correctionOf) ?? group[0]!;
    const root = rootFactId(first);
    const record = assertedRecord(first, {
      ...first,
      factId: root,
      replaceExisting: first.replaceExisting === true,
      at: first.recordedAt,
    });
    records.push(record);
    assertedOf.set(JSON.stringify([first.workspaceId, first.dataset, root]), {
      factId: root,
      episodeId: record.episodeId,
      validAt: first.validAt,
      validUntil: first.validUntil,
      replaceExisting: first.replaceExisting === true,
      at: first.recordedAt,
    });
  }
  // A fact stored ending where a fact already recorded that ends it begins was bounded on
  // arrival (the stored end is derived): as asserted, it was open-ended.
  const byPair = new Map<string, { fact: AssertedFact; record: FactRecordDoc }[]>();
  for (const record of records) {
    const key = JSON.stringify([record.workspaceId, record.dataset, pairKey(record)]);
    const fact = assertedOf.get(
      JSON.stringify([record.workspaceId, record.dataset, record.factId]),
    )!;
    const list = byPair.get(key);
    if (list) list.push({ fact, record });
    else byPair.set(key, [{ fact, record }]);
  }
  for (const pair of byPair.values()) {
    for (const { fact, record } of pair) {
      const until = fact.validUntil;
      if (until === null) continue;
      const boundedOnArrival = pair.some(
        (other) =>
          other.fact.validAt.getTime() === until.getTime() &&
          other.fact.at.getTime() <= fact.at.getTime() &&
          compareAsserted(fact, other.fact) < 0 &&
          endsFact(fact, other.fact),
      );
      if (boundedOnArrival) {
        fact.validUntil = null;
        record.fact!.validUntil = null;
      }
    }
  }
  for (const group of groups.values()) {
    const root = rootFactId(group[0]!);
    const tenant = { workspaceId: group[0]!.workspaceId, dataset: group[0]!.dataset };
    const pair = { subjectKey: group[0]!.subjectKey, predicateKey: group[0]!.predicateKey };
    const self = assertedOf.get(JSON.stringify([tenant.workspaceId, tenant.dataset, root]))!;
    let deletes = 0;
    let restores = 0;
    for (const d of group) {
      if (d.correctionOf && !d.correctedBy) {
        records.push(lifecycleRecord(tenant, pair, 'restored', root, restores++, d.recordedAt));
      }
      if (d.invalidReason === 'deleted' && d.invalidAt) {
        records.push(lifecycleRecord(tenant, pair, 'deleted', root, deletes++, d.invalidAt));
      }
      if (d.invalidReason === 'superseded' && d.invalidAt) {
        const by = d.supersededBy;
        const successor = by
          ? assertedOf.get(JSON.stringify([tenant.workspaceId, tenant.dataset, by]))
          : undefined;
        const byRule =
          successor !== undefined &&
          !listed.has(JSON.stringify([by, root])) &&
          compareAsserted(self, successor) < 0 &&
          endsFact(self, successor);
        if (!byRule) {
          records.push(
            saidWrongRecord(tenant, pair, {
              factId: root,
              by,
              episodeId: successor?.episodeId ?? null,
              at: d.invalidAt,
            }),
          );
        }
      }
    }
  }
  // Their changes were told by the feed that wrote them, or never (an import).
  for (const record of records) record.untold = true;
  return records;
}
