import { entityKey, predicateKey } from '../domain/names.js';
import { boundedValidUntil, replacedFacts, type TimelineFact } from '../domain/replacement.js';
import { duplicateKeyIndexes } from './bulkErrors.js';
import type { Collections } from './collections.js';
import { UNPAGED_BATCH_SIZE } from './database.js';
import {
  correctedFactId,
  type FactDoc,
  type InvalidationChange,
  type InvalidationClaimDoc,
  invalidationClaim,
} from './documents.js';
import { believedVersionsOf, factsByIds } from './facts.js';
import { applyInvalidationClaims } from './invalidations.js';
import type { Tenant } from './tenant.js';

/**
 * Supersessions in batches: steps 4 and 5 of recording an episode (store/recordEpisode.ts)
 * in a few database commands a pass, however many facts the episode has and however many
 * facts they supersede.
 *
 * Two kinds of targets:
 * - the facts a new fact lists in `supersedes` (said wrong): each goes to the first fact
 *   of the episode that names it;
 * - the believed facts of the episode's subjects and predicates that the rule of
 *   domain/replacement.ts says a `replaceExisting` fact replaces, each with its corrected
 *   version: valid time decides, and every writer applies the rule to what it reads after
 *   its own facts are stored (and again after each pass that recorded versions), so
 *   concurrent episodes (and an interrupted one completed later) converge on one history.
 * Each invalidation goes through the per-fact claim of store/facts.ts
 * (docs/TEMPORAL_MODEL.md, "Writes without transactions"); here the claims of all targets
 * of a pass are inserted by one command and their follow-ups written by a few more
 * (store/invalidations.ts), after one read of the claims others took first, if any.
 */

/** A new fact of the episode, as far as supersession is concerned. */
export interface SupersedingFact {
  factId: string;
  episodeId: string;
  subject: string;
  predicate: string;
  validAt: Date;
  validUntil: Date | null;
  /** When it was stored (by this attempt, or the earlier one that stored it). */
  recordedAt: Date;
  /** Normalized fact ids listed in `supersedes`. */
  supersedes: readonly string[];
  replaceExisting: boolean;
}

/** What supersession reads of a fact of a pair. */
type TargetDoc = Pick<
  FactDoc,
  | '_id'
  | 'factId'
  | 'episodeId'
  | 'subjectKey'
  | 'predicateKey'
  | 'validAt'
  | 'validUntil'
  | 'recordedAt'
  | 'invalidAt'
  | 'restorations'
  | 'replaceExisting'
  | 'correctionOf'
>;

const TARGET_FIELDS = {
  _id: 1,
  factId: 1,
  episodeId: 1,
  subjectKey: 1,
  predicateKey: 1,
  validAt: 1,
  validUntil: 1,
  recordedAt: 1,
  invalidAt: 1,
  restorations: 1,
  replaceExisting: 1,
  correctionOf: 1,
} as const;

const pairKey = (subjectKey: string, predicateKey: string) =>
  JSON.stringify([subjectKey, predicateKey]);
/** A subject and predicate, as a fact names them. */
type Pair = Pick<SupersedingFact, 'subject' | 'predicate'>;

const pairOf = (f: Pair) => pairKey(entityKey(f.subject), predicateKey(f.predicate));

/** A stored fact as the rule reads it (a fact stored before the flag existed did not replace). */
const onTimeline = (d: TargetDoc): TimelineFact => ({
  factId: d.factId,
  episodeId: d.episodeId,
  validAt: d.validAt,
  validUntil: d.validUntil,
  recordedAt: d.recordedAt,
  replaceExisting: d.replaceExisting === true,
  believed: d.invalidAt === null,
});

const latest = (...instants: Date[]) => new Date(Math.max(...instants.map((d) => d.getTime())));

/**
 * Passes of the rule one call makes at most. Each pass that supersedes something records
 * at most one version per fact it supersedes, each ending strictly earlier than the fact
 * it corrects, so the passes end; the bound only stops a livelock (the call then fails,
 * and its retry or the start-up repair carries on).
 */
const MAX_PASSES = 50;

/**
 * Step 4, before the facts are stored: the `validUntil` each fact of the episode is stored
 * with: its own, or where its earliest successor among the facts of its subject and
 * predicate already recorded (believed or not) and the episode's other facts begins
 * (domain/replacement.ts `boundedValidUntil`). One read.
 */
export async function replacementBounds(
  db: Collections,
  tenant: Tenant,
  facts: readonly SupersedingFact[],
): Promise<(Date | null)[]> {
  if (facts.length === 0) return [];
  const own = new Set(facts.map((f) => f.factId));
  const pairs = new Set(facts.map(pairOf));
  const from = new Date(Math.min(...facts.map((f) => f.validAt.getTime())));
  const recorded = (await successorsOf(db, tenant, facts, from)).filter(
    (d) => !own.has(d.factId) && pairs.has(pairKey(d.subjectKey, d.predicateKey)),
  );
  const byPair = groupByPair([
    ...recorded.map((d) => ({ key: pairKey(d.subjectKey, d.predicateKey), fact: onTimeline(d) })),
    ...facts.map((f) => ({ key: pairOf(f), fact: episodeFact(f) })),
  ]);
  return facts.map((f) => boundedValidUntil(episodeFact(f), byPair.get(pairOf(f)) ?? []));
}

/** A fact of the episode being recorded, as the rule reads it. */
const episodeFact = (f: SupersedingFact): TimelineFact => ({
  factId: f.factId,
  episodeId: f.episodeId,
  validAt: f.validAt,
  validUntil: f.validUntil,
  recordedAt: f.recordedAt,
  replaceExisting: f.replaceExisting,
  believed: true,
});

function groupByPair<T>(items: readonly { key: string; fact: T }[]): Map<string, T[]> {
  const byPair = new Map<string, T[]>();
  for (const { key, fact } of items) {
    const pair = byPair.get(key);
    if (pair) pair.push(fact);
    else byPair.set(key, [fact]);
  }
  return byPair;
}

/**
 * Step 5, after the facts are stored: supersedes what the episode's facts replace, at
 * transaction time `now` (never before the recording of either fact):
 *   1. the facts each lists in `supersedes` (said wrong: no corrected version), with the
 *      believed corrected versions of them (a fact said wrong is wrong in every version);
 *   2. then, pass after pass until a pass finds nothing to supersede, for every subject and
 *      predicate of the episode's facts, what domain/replacement.ts `replacedFacts` decides
 *      over the facts read now, the episode's own among them, each replacement recording
 *      the corrected version of what it supersedes. The versions are new believed facts
 *      of the pair, so the pass after them applies the rule to them too (a late fact
 *      between a version and its successor ends the version in turn).
 * A fact of the episode itself is never a listed target. Idempotent: a re-run finds the
 * targets superseded, or claimed by the interrupted run, whose claims it completes.
 */
export async function supersedeFacts(
  db: Collections,
  tenant: Tenant,
  facts: readonly SupersedingFact[],
  now: Date,
): Promise<void> {
  await supersedeListedFacts(db, tenant, facts, now);
  await settlePairs(db, tenant, facts, now);
}

/** A fact whose relations a writer settles: its own, or one it restored or recorded. */
type SettledFact = Pick<SupersedingFact, 'factId' | 'subject' | 'predicate' | 'validAt'> & {
  replaceExisting?: boolean;
};

/**
 * Step 5.2: the rule over the given facts' subjects and predicates, pass after pass until
 * a pass finds nothing to supersede, each supersession at transaction time `now` or the
 * later of the two facts' recording (the migration of store/migrations.ts passes the
 * epoch, so each is at the instant the later fact arrived). A writer settles what
 * concerns its own facts and the versions it records (`factsToSettle`); what concerns two
 * facts of other writers, each of those settles.
 */
export async function settlePairs(
  db: Collections,
  tenant: Tenant,
  facts: readonly SettledFact[],
  now: Date,
): Promise<void> {
  if (facts.length === 0) return;
  const ids = new Set(facts.map((f) => f.factId));
  let from = Math.min(...facts.map((f) => f.validAt.getTime()));
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const docs = await factsToSettle(db, tenant, facts, [...ids], new Date(from));
    const byId = new Map(docs.map((d) => [d.factId, d]));
    const byPair = groupByPair(
      docs.map((d) => ({ key: pairKey(d.subjectKey, d.predicateKey), fact: onTimeline(d) })),
    );
    const invalidations: Invalidation[] = [];
    for (const pair of byPair.values()) {
      for (const [target, { by, correctedUntil }] of replacedFacts(pair)) {
        const doc = byId.get(target)!;
        const successor = byId.get(by)!;
        invalidations.push({
          fact: doc,
          change: {
            reason: 'superseded',
            at: latest(now, doc.recordedAt, successor.recordedAt),
            supersededBy: by,
            correctedUntil,
          },
        });
        // Its version is this writer's to settle in the next pass: read by id, and its
        // successors from its validAt on.
        if (correctedUntil) ids.add(correctedFactId(doc, by));
        from = Math.min(from, doc.validAt.getTime());
      }
    }
    if (invalidations.length === 0) return;
    await invalidateFacts(db, tenant, invalidations);
  }
  throw new Error(`supersession did not settle in ${MAX_PASSES} passes`);
}

/**
 * Step 5.1: each listed fact, to the first fact of the episode that names it, and then
 * the believed corrected versions of the listed facts, until a read finds none (a racing
 * replacement may record one while this runs: applying its claim, which this does when it
 * finds it, records it before the next read).
 */
async function supersedeListedFacts(
  db: Collections,
  tenant: Tenant,
  facts: readonly SupersedingFact[],
  now: Date,
): Promise<void> {
  const own = new Set(facts.map((f) => f.factId));
  const listed = [...new Set(facts.flatMap((f) => f.supersedes))].filter((id) => !own.has(id));
  if (listed.length === 0) return;
  const found = await factsByIds(db, tenant, listed);
  const claimedBy = new Map<string, SupersedingFact>();
  for (const f of facts) {
    for (const target of f.supersedes) {
      if (!own.has(target) && !claimedBy.has(target) && found.has(target)) claimedBy.set(target, f);
    }
  }
  const wrong = (doc: TargetDoc, by: SupersedingFact): Invalidation => ({
    fact: doc,
    change: {
      reason: 'superseded',
      at: latest(now, doc.recordedAt, by.recordedAt),
      supersededBy: by.factId,
    },
  });
  await invalidateFacts(
    db,
    tenant,
    [...claimedBy].map(([target, by]) => wrong(found.get(target)!, by)),
  );
  // The versions, by the fact each corrects as first recorded.
  const byRoot = new Map<string, SupersedingFact>();
  for (const [target, by] of claimedBy) {
    byRoot.set(found.get(target)!.correctionOf ?? target, by);
  }
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const versions = await believedVersionsOf<TargetDoc>(
      db,
      tenant,
      [...byRoot.keys()],
      'store:supersedeFacts',
      TARGET_FIELDS,
    );
    if (versions.length === 0) return;
    await invalidateFacts(
      db,
      tenant,
      versions.map((v) => wrong(v, byRoot.get(v.correctionOf!)!)),
    );
  }
  throw new Error(`supersession did not settle in ${MAX_PASSES} passes`);
}

/**
 * What the rule needs to settle `facts` (store/supersession.ts `settlePairs`), in three
 * reads at once, each served by an index and decoding only what it needs however long
 * the pairs' histories are:
 *   - the facts to settle (`ids`: the writer's own, and the versions it recorded), by id;
 *   - the believed facts a replacing fact among them may supersede: of its subject and
 *     predicate, valid from no later than it and reaching past the earliest of them;
 *   - the successors: the replacing facts of the pairs, believed or not, valid from `from`
 *     (the earliest validAt among the facts to settle) on.
 * A fact between an older target and its replacing fact that only the next read would
 * find (a racing writer's) is met in the next pass: the target's version is then a fact
 * to settle, read with successors from its validAt on.
 */
async function factsToSettle(
  db: Collections,
  tenant: Tenant,
  facts: readonly SettledFact[],
  ids: readonly string[],
  from: Date,
): Promise<TargetDoc[]> {
  const scope = { workspaceId: tenant.workspaceId, dataset: tenant.dataset };
  const options = { comment: 'store:supersedeFacts', projection: TARGET_FIELDS };
  const replacing = facts.filter((f) => f.replaceExisting);
  const times = replacing.map((f) => f.validAt.getTime());
  const [own, overlapping, successors] = await Promise.all([
    db.facts
      .find<TargetDoc>({ ...scope, factId: { $in: [...ids] } }, options)
      .batchSize(UNPAGED_BATCH_SIZE)
      .toArray(),
    replacing.length > 0
      ? db.facts
          .find<TargetDoc>(
            {
              ...scope,
              ...pairsFilter(replacing),
              invalidAt: null,
              validAt: { $lte: new Date(Math.max(...times)) },
              $or: [{ validUntil: null }, { validUntil: { $gt: new Date(Math.min(...times)) } }],
            },
            options,
          )
          .batchSize(UNPAGED_BATCH_SIZE)
          .toArray()
      : [],
    successorsOf(db, tenant, facts, from),
  ]);
  const pairs = new Set(facts.map(pairOf));
  const byId = new Map<string, TargetDoc>();
  for (const d of [...own, ...overlapping, ...successors]) {
    if (pairs.has(pairKey(d.subjectKey, d.predicateKey))) byId.set(d.factId, d);
  }
  return [...byId.values()];
}

/**
 * The replacing facts (believed or not) of the given facts' subjects and predicates valid
 * from `from` on: the successors any of them may have. The query asks for every subject
 * with every predicate (a fixed shape that the subject/predicate index serves, however
 * many pairs there are); the combinations that are not pairs of `facts` are dropped by
 * the caller.
 */
function successorsOf(
  db: Collections,
  tenant: Tenant,
  facts: readonly Pair[],
  from: Date,
): Promise<TargetDoc[]> {
  return db.facts
    .find<TargetDoc>(
      {
        workspaceId: tenant.workspaceId,
        dataset: tenant.dataset,
        ...pairsFilter(facts),
        replaceExisting: true,
        validAt: { $gte: from },
      },
      { comment: 'store:supersedeFacts', projection: TARGET_FIELDS },
    )
    .batchSize(UNPAGED_BATCH_SIZE)
    .toArray();
}

/** Every subject of `facts` with every predicate of `facts`, on the stored keys. */
const pairsFilter = (facts: readonly Pair[]) => ({
  subjectKey: { $in: [...new Set(facts.map((f) => entityKey(f.subject)))] },
  predicateKey: { $in: [...new Set(facts.map((f) => predicateKey(f.predicate)))] },
});

/** One invalidation to make: the fact as read, and what to stamp on it. */
interface Invalidation {
  fact: Pick<FactDoc, '_id' | 'factId' | 'invalidAt' | 'restorations'>;
  change: InvalidationChange;
}

/**
 * `invalidateFact` (store/facts.ts) for many facts at once, with the same claim documents
 * and the same outcome per fact: a fact already invalidated when read is skipped; for the
 * others the claims are inserted by one unordered command, and a duplicate key means the
 * fact was claimed already (by a racing caller, or by an earlier attempt of this one):
 * that claim's values, not ours, are written if it is not applied yet
 * (store/invalidations.ts). A fixed number of commands whatever the number of facts.
 * Returns the ids of the facts whose claim this call won.
 */
async function invalidateFacts(
  db: Collections,
  tenant: Tenant,
  invalidations: readonly Invalidation[],
): Promise<string[]> {
  const claims: InvalidationClaimDoc[] = invalidations
    .filter((i) => i.fact.invalidAt === null)
    .map(({ fact, change }) => invalidationClaim(tenant, fact, change, false));
  if (claims.length === 0) return [];

  let lost = new Set<number>();
  try {
    await db.claims.insertMany(claims, { ordered: false, comment: 'store:invalidateFacts' });
  } catch (error) {
    // The claims that failed only because their `_id` was taken; any other error (one with
    // no write errors at all, from a lost connection, says nothing about which claims were
    // written) is thrown.
    lost = new Set(duplicateKeyIndexes(error));
  }
  const won = claims.filter((_, i) => !lost.has(i));
  const toApply = [...won];
  if (lost.size > 0) {
    // The tenant as well as the _id: on a sharded cluster the shard key routes the read.
    const winners = await db.claims
      .find(
        {
          _id: { $in: claims.filter((_, i) => lost.has(i)).map((claim) => claim._id) },
          workspaceId: tenant.workspaceId,
          dataset: tenant.dataset,
        },
        { comment: 'store:invalidateFacts' },
      )
      .batchSize(UNPAGED_BATCH_SIZE)
      .toArray();
    toApply.push(...winners.filter((claim) => !claim.applied));
  }
  await applyInvalidationClaims(db, tenant, toApply);
  return won.map((claim) => claim.factId);
}
