import type { AnyBulkWriteOperation, Filter } from 'mongodb';
import { recallTerms } from '../domain/recallTerms.js';
import type { Collections } from './database.js';
import type { FactDoc, FactView, MemoryDoc } from './documents.js';
import { allOf, bitemporalFilter } from './factFilters.js';
import { FACT_VIEW } from './facts.js';
import { memoryFilter } from './memories.js';
import { FACT_ORDER, MEMORY_ORDER } from './orders.js';
import type { Tenant } from './tenant.js';

/**
 * The reads behind ranked recall (domain/recall.ts ranks what they return). Candidates are
 * the documents of the view holding at least one of the query's analyzed terms, read
 * through the `recallTerms` index; at most RECALL_CANDIDATE_CAP of them, the most recent
 * first, so a term found in more documents than that is scored on the most recent ones
 * only (README, "Ranked recall"). Two commands per kind, whatever the query.
 */
export const RECALL_CANDIDATE_CAP = 1000;

/** Facts live at `at` on both axes that share a term with `query`, and how many are live. */
export async function factCandidates(
  db: Collections,
  tenant: Tenant,
  query: string,
  at: Date,
): Promise<{ candidates: FactView[]; inView: number }> {
  const terms = recallTerms(query);
  if (terms.length === 0) return { candidates: [], inView: 0 };
  const tag = { comment: 'store:factCandidates' };
  const live: Filter<FactDoc>[] = [
    { workspaceId: tenant.workspaceId, dataset: tenant.dataset },
    ...bitemporalFilter(at, at),
  ];
  const [candidates, inView] = await Promise.all([
    db.facts
      .find<FactView>(allOf([...live, { recallTerms: { $in: terms } }]), {
        projection: FACT_VIEW,
        ...tag,
      })
      .sort(FACT_ORDER)
      .limit(RECALL_CANDIDATE_CAP)
      .batchSize(RECALL_CANDIDATE_CAP)
      .toArray(),
    db.facts.countDocuments(allOf(live), tag),
  ]);
  return { candidates, inView };
}

/**
 * Memories of the live view at `asOf` (SupaCloud's rules, archived left out; now when
 * absent) that share a term with `query`, and how many the view holds.
 */
export async function memoryCandidates(
  db: Collections,
  tenant: Tenant,
  query: string,
  view: { asOf: Date | null; now: Date },
): Promise<{ candidates: MemoryDoc[]; inView: number }> {
  const terms = recallTerms(query);
  if (terms.length === 0) return { candidates: [], inView: 0 };
  const tag = { comment: 'store:memoryCandidates' };
  const live = memoryFilter({ ...tenant, asOf: view.asOf, now: view.now, includeArchived: false });
  const [candidates, inView] = await Promise.all([
    db.memories
      .find({ $and: [live, { recallTerms: { $in: terms } }] }, tag)
      .sort(MEMORY_ORDER)
      .limit(RECALL_CANDIDATE_CAP)
      .batchSize(RECALL_CANDIDATE_CAP)
      .toArray(),
    db.memories.countDocuments(live, tag),
  ]);
  return { candidates, inView };
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
