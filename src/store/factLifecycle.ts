import { rootFactId } from '../domain/pairHistory.js';
import { insertOnce } from './claims.js';
import type { Collections } from './collections.js';
import type { FactDoc } from './documents.js';
import { lifecycleRecord, type Pair, recordsOfPairs } from './factRecords.js';
import { FactNotFoundError, findFact } from './facts.js';
import { historyOfRecords, materialisePairs } from './materialise.js';
import type { Tenant } from './tenant.js';

/**
 * Deleting and restoring a fact: each appends one record to its pair's history and
 * materialises the pair (store/materialise.ts). The record's `_id` is the claim
 * (docs/TEMPORAL_MODEL.md, "Writes without transactions"): the n-th delete of a fact and
 * the restore of that delete exist at most once, so of racing deletes one succeeds and the
 * others are refused, and a retry completes the materialisation the first attempt began.
 * Either acts on the fact as first recorded, whichever of its documents (a corrected
 * version, a restored one) the id names.
 */

/** The fact a document id names, its pair, and the pair's records of it. */
async function lifecycleTarget(db: Collections, tenant: Tenant, factId: string) {
  const doc = await findFact(db, tenant, factId);
  if (!doc) return null;
  const root = rootFactId(doc);
  const pair: Pair = { subjectKey: doc.subjectKey, predicateKey: doc.predicateKey };
  const records = await recordsOfPairs(db, tenant, [pair]);
  const own = records.filter((r) => r.factId === root);
  return {
    root,
    pair,
    records,
    deletes: own.filter((r) => r.kind === 'deleted').length,
    restores: own.filter((r) => r.kind === 'restored').length,
  };
}

/**
 * Before a refusal: materialises the pair if a record of it is still unseen, so a retry of
 * a delete or restore whose first attempt a fault cut short (its record stored, the pair
 * not materialised) completes that attempt while it answers that it was done.
 */
async function completeUnseen(
  db: Collections,
  tenant: Tenant,
  target: { pair: Pair; records: readonly { materialised: boolean }[] },
): Promise<void> {
  if (target.records.some((r) => !r.materialised)) {
    await materialisePairs(db, tenant, [target.pair], { feed: true, redact: true });
  }
}

/**
 * A soft delete (`deleteFact`, Memory Soda's DELETE): the fact is wrong from `at` on, in
 * whichever version is believed. Refused (FactNotFoundError) when nothing of it is
 * believed now (an unknown id, a fact deleted already or superseded whole), or when a
 * racing delete won. Answers the document the id names, as it is after the delete.
 */
export async function deleteFact(
  db: Collections,
  tenant: Tenant,
  factId: string,
  at: Date,
): Promise<FactDoc> {
  const target = await lifecycleTarget(db, tenant, factId);
  if (!target) throw new FactNotFoundError('not_found', 'Fact not found');
  const { root, pair, records } = target;
  const believed = historyOfRecords(records).some(
    (run) => run.factId === root && run.invalidAt === null,
  );
  if (!believed) {
    await completeUnseen(db, tenant, target);
    throw new FactNotFoundError('already_invalidated', 'Fact not found');
  }
  const won = await insertOnce(
    db.factRecords,
    lifecycleRecord(tenant, pair, 'deleted', root, target.deletes, at),
    'store:deleteFact',
  );
  // A loser materialises too: the winner's write may be the one a fault cut short.
  await materialisePairs(db, tenant, [pair], { feed: true, redact: true });
  if (!won) throw new FactNotFoundError('already_invalidated', 'Fact not found');
  return (await findFact(db, tenant, factId))!;
}

/**
 * Undoes the fact's last delete (`restoreFact`): from `now` on it is believed again, as a
 * new version (`correctionOf` names the fact), ending where what now follows it begins;
 * what the store believed while it was deleted stays as it was. Refused when the fact is
 * not deleted, or a racing restore won. Answers the version now believed (or, if a
 * successor leaves it no time of its own, the document the id names).
 */
export async function restoreFact(
  db: Collections,
  tenant: Tenant,
  factId: string,
  now: Date,
): Promise<FactDoc> {
  const refuse = (why: FactNotFoundError['reason']) =>
    new FactNotFoundError(why, 'No deleted fact with that id');
  const target = await lifecycleTarget(db, tenant, factId);
  if (!target) throw refuse('not_found');
  if (target.deletes <= target.restores) {
    await completeUnseen(db, tenant, target);
    throw refuse('not_invalidated');
  }
  const won = await insertOnce(
    db.factRecords,
    lifecycleRecord(tenant, target.pair, 'restored', target.root, target.restores, now),
    'store:restoreFact',
  );
  const { after } = await materialisePairs(db, tenant, [target.pair], { feed: true, redact: true });
  if (!won) throw refuse('not_invalidated');
  const believed = after.find((d) => rootFactId(d) === target.root && d.invalidAt === null);
  return (await findFact(db, tenant, believed?.factId ?? factId))!;
}
