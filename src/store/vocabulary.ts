import { documentId } from '../domain/ids.js';
import { deletions, typoDistanceFor, typoKeys } from '../domain/typos.js';
import { isOnlyDuplicateKeys } from './bulkErrors.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import type { VocabularyDoc } from './documents.js';
import { type Tenant, tenantOfDocument } from './tenant.js';

/**
 * The dataset's vocabulary: one document per term its facts (statement or source quote)
 * or memories hold, for the typos of a question (domain/typos.ts). Written after the
 * documents that bring a term (a crash in between leaves a term a typo cannot reach, never
 * a term nothing held); an erasure removes the terms nothing remaining holds
 * (`forgetTerms`).
 */

/** What brings terms to the vocabulary: a fact (statement, quote) or a memory (text). */
type Worded = {
  workspaceId: string;
  dataset: string;
  recallTerms: string[];
  quoteTerms?: string[];
};

/** The most terms a question's typos are looked up among, per question. */
const TYPO_LOOKUP_CAP = 200;

/** The `_id` of a term's document. */
function vocabularyDocumentId(tenant: Tenant, term: string): string {
  return documentId('term', tenant.workspaceId, tenant.dataset, term);
}

/** The terms of these facts, per tenant (an import writes several datasets at once). */
function termsByTenant(
  facts: readonly Worded[],
): Map<string, { tenant: Tenant; terms: Set<string> }> {
  const found = new Map<string, { tenant: Tenant; terms: Set<string> }>();
  for (const f of facts) {
    const key = JSON.stringify([f.workspaceId, f.dataset]);
    let entry = found.get(key);
    if (!entry) {
      entry = { tenant: tenantOfDocument(f), terms: new Set() };
      found.set(key, entry);
    }
    for (const t of [...f.recallTerms, ...(f.quoteTerms ?? [])]) entry.terms.add(t);
  }
  return found;
}

/**
 * Adds the terms of `facts` their dataset's vocabulary lacks (the facts are stored); how
 * many it added.
 */
export async function addToVocabulary(db: Collections, facts: readonly Worded[]): Promise<number> {
  const tag = { comment: 'store:addToVocabulary' };
  let added = 0;
  for (const { tenant, terms } of termsByTenant(facts).values()) {
    const all = [...terms];
    for (let start = 0; start < all.length; start += UNPAGED_BATCH_SIZE) {
      const chunk = all.slice(start, start + UNPAGED_BATCH_SIZE);
      const ids = chunk.map((t) => vocabularyDocumentId(tenant, t));
      const known = new Set(
        (
          await db.vocabulary
            .find(
              { _id: { $in: ids }, workspaceId: tenant.workspaceId },
              { projection: { _id: 1 }, ...tag },
            )
            .batchSize(ids.length)
            .limit(ids.length)
            .toArray()
        ).map((d) => d._id),
      );
      const missing: VocabularyDoc[] = chunk
        .filter((_, i) => !known.has(ids[i]!))
        .map((term) => ({
          _id: vocabularyDocumentId(tenant, term),
          workspaceId: tenant.workspaceId,
          dataset: tenant.dataset,
          term,
          typoKeys: typoKeys(term),
        }));
      if (missing.length === 0) continue;
      // A concurrent write of the same term may insert it first: that copy is the same.
      added += await db.vocabulary
        .insertMany(missing, { ordered: false, ...tag })
        .then((r) => r.insertedCount)
        .catch((error) => {
          if (!isOnlyDuplicateKeys(error)) throw error;
          return error.result.insertedCount as number;
        });
    }
  }
  return added;
}

/** Whether a fact (statement or source quote) or a memory of the dataset holds `term`. */
async function termHeld(db: Collections, tenant: Tenant, term: string): Promise<boolean> {
  const mine = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };
  const tag = { comment: 'store:forgetTerms' };
  const [statement, quote, memory] = await Promise.all([
    db.facts.countDocuments({ ...mine, recallTerms: term }, tag),
    db.facts.countDocuments({ ...mine, quoteTerms: term }, tag),
    db.memories.countDocuments({ ...mine, recallTerms: term }, tag),
  ]);
  return statement + quote + memory > 0;
}

/**
 * After an erasure: removes the terms of `terms` no remaining fact or memory holds.
 * Each removed term is checked once more afterwards and put back if a fact written
 * meanwhile holds it (its writer may have found it still there before the removal).
 */
export async function forgetTerms(
  db: Collections,
  tenant: Tenant,
  terms: Iterable<string>,
): Promise<void> {
  const tag = { comment: 'store:forgetTerms' };
  const gone: string[] = [];
  for (const term of new Set(terms)) {
    if (await termHeld(db, tenant, term)) continue;
    await db.vocabulary.deleteOne(
      { _id: vocabularyDocumentId(tenant, term), workspaceId: tenant.workspaceId },
      tag,
    );
    gone.push(term);
  }
  const back: string[] = [];
  for (const term of gone) if (await termHeld(db, tenant, term)) back.push(term);
  if (back.length > 0) {
    await addToVocabulary(db, [{ ...tenant, recallTerms: back, quoteTerms: [] }]);
  }
}

/**
 * The dataset's terms a question's `words` may mean: those sharing a deletion with one of
 * them within its distance (domain/typos.ts), at most TYPO_LOOKUP_CAP. One command.
 */
export async function termsNear(
  db: Collections,
  tenant: Tenant,
  words: readonly string[],
): Promise<string[]> {
  const keys = new Set(
    words.flatMap((w) => (typoDistanceFor(w) > 0 ? deletions(w, typoDistanceFor(w)) : [])),
  );
  if (keys.size === 0) return [];
  const found = await db.vocabulary
    .find(
      { workspaceId: tenant.workspaceId, dataset: tenant.dataset, typoKeys: { $in: [...keys] } },
      { projection: { _id: 0, term: 1 }, comment: 'store:termsNear' },
    )
    .limit(TYPO_LOOKUP_CAP)
    .batchSize(TYPO_LOOKUP_CAP)
    .toArray();
  return found.map((d) => d.term);
}
