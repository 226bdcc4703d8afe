import { readFile } from 'node:fs/promises';
import type { Document } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import {
  CurationCreateMemoryDocument,
  CurationDatasetMemoriesDocument,
  CurationDeleteFactDocument,
  CurationFactDocument,
  CurationLiveFactsDocument,
  CurationRestoreFactDocument,
  CurationSupersedeMemoryDocument,
  CurationUpdateMemoryDocument,
  ErasureEntitiesDocument,
  ErasureEraseDatasetDocument,
  ErasureEraseEpisodeDocument,
  ErasureRecordEpisodeDocument,
  type RecordEpisodeInput,
} from '../generated/operations.js';
import { DEMO } from '../helpers/demo.js';
import { type GraphqlError, openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Erasure (admin): eraseDataset and eraseEpisode physically remove documents, the one
 * place anything is. Nothing of what was erased may remain in any collection, nothing
 * else may change, a repeat removes nothing more, and every call is audited without the
 * erased content.
 */

const DATASET = 'user_42';
/** A dataset name with the characters a path or a regex would trip over. */
const ERASED = 'erase me/ü?#% 42.*';

const acmeId = workspaceIdFor('acme');
const globexId = workspaceIdFor('globex');

let t: TestGateway;
let admin: string;
let adminKeyId: string;
let writer: string;
let reader: string;
let globexAdmin: string;

const keyIdOf = (key: string) => /^mk_([0-9a-f]{24})_/.exec(key)![1]!;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: ['acme', 'globex'] });
  admin = await t.key('acme', ['read', 'write', 'admin']);
  adminKeyId = keyIdOf(admin);
  writer = await t.key('acme', ['read', 'write']);
  reader = await t.key('acme', ['read']);
  globexAdmin = await t.key('globex', ['read', 'write', 'admin']);
  // The demo data once more under another dataset name, in both workspaces.
  const demo = await readFile(new URL('../../src/demo/user_42.jsonl', import.meta.url), 'utf8');
  const renamed = demo
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.stringify({ ...JSON.parse(l), dataset: ERASED }))
    .join('\n');
  for (const workspace of ['acme', 'globex']) {
    const outcome = await importJsonl(t.database.collections, {
      now: new Date(),
      workspace,
      content: renamed,
    });
    expect(outcome.ok).toBe(true);
  }
});

type Result<T> = { status: number; body: { data?: T | null; errors?: GraphqlError[] } };

function data<T>(result: Result<T>): T {
  expect(result.body.errors).toBeUndefined();
  expect(result.status).toBe(200);
  return result.body.data!;
}

function codeOf<T>(result: Result<T>): string | undefined {
  expect(result.body.errors?.length).toBeGreaterThan(0);
  return result.body.errors![0]!.extensions?.code;
}

/** Every document of every collection of the database, by collection, in `_id` order. */
async function allDocuments(): Promise<Record<string, Document[]>> {
  const names = (await t.database.db.listCollections().toArray()).map((c) => c.name).sort();
  const out: Record<string, Document[]> = {};
  for (const name of names) {
    out[name] = await t.database.db.collection(name).find({}).sort({ _id: 1 }).toArray();
  }
  return out;
}

/** The same, without the audit trail (which erasure appends to). */
async function allButAudit(): Promise<Record<string, Document[]>> {
  const { audit: _audit, ...rest } = await allDocuments();
  return rest;
}

async function auditOf(action: 'eraseDataset' | 'eraseEpisode', workspaceId = acmeId) {
  return t.database.collections.audit.find({ workspaceId, action }).sort({ at: 1 }).toArray();
}

const episodeInput = (
  episodeId: string,
  content: string,
  facts: RecordEpisodeInput['facts'],
  entities: RecordEpisodeInput['entities'] = [],
): RecordEpisodeInput => ({
  episode: { episodeId, occurredAt: '2026-09-01T10:00:00.000Z', source: 'chat', content },
  entities,
  facts,
});

async function record(dataset: string, input: RecordEpisodeInput, key = writer) {
  return data(await t.graphql(ErasureRecordEpisodeDocument, { dataset, input }, key)).recordEpisode;
}

/** What the write path leaves behind in a dataset: versions, fact records, episode records. */
async function populate(dataset: string, key: string) {
  const memory = data(
    await t.graphql(
      CurationCreateMemoryDocument,
      {
        dataset,
        input: {
          text: 'ERASE-ME memory: the user keeps a diary in Vienna.',
          memoryKind: 'fact',
          scope: 'user',
          sourceType: 'conversation',
        },
      },
      key,
    ),
  ).createMemory;
  data(
    await t.graphql(
      CurationUpdateMemoryDocument,
      {
        dataset,
        memoryId: memory.memoryId,
        patch: { text: 'ERASE-ME memory: the user keeps a diary in Graz.' },
      },
      key,
    ),
  );
  data(
    await t.graphql(
      CurationSupersedeMemoryDocument,
      {
        dataset,
        memoryId: memory.memoryId,
        input: {
          text: 'ERASE-ME successor: the diary moved to Linz.',
          memoryKind: 'fact',
          scope: 'user',
          sourceType: 'conversation',
        },
      },
      key,
    ),
  );
  data(await t.graphql(CurationDeleteFactDocument, { dataset, id: DEMO.facts.familyCar }, key));
  data(await t.graphql(CurationRestoreFactDocument, { dataset, id: DEMO.facts.familyCar }, key));
  data(await t.graphql(CurationDeleteFactDocument, { dataset, id: DEMO.facts.familyCar }, key));
  await record(
    dataset,
    episodeInput(
      'e7a1c0de-0000-4000-8000-000000000001',
      'ERASE-ME episode: I sold the Corolla and bought a Rivian R1T.',
      [
        {
          subject: 'user',
          predicate: 'drives',
          object: 'Rivian R1T',
          objectIsEntity: true,
          confidence: 0.9,
          sourceQuote: 'ERASE-ME quote: bought a Rivian R1T',
          supersedes: [DEMO.facts.toyotaInterest],
        },
      ],
      [{ name: 'Rivian R1T', type: 'PRODUCT' }],
    ),
    key,
  );
}

/** Whether a stored document belongs to the dataset `name` of the workspace. */
const belongsTo = (collection: string, doc: Document, workspaceId: string, name: string) =>
  doc.workspaceId === workspaceId &&
  (doc.dataset === name || (collection === 'datasets' && doc.name === name));

/** Every string of the erased documents' content, for "the audit holds none of it". */
function contentStrings(docs: Document[]): string[] {
  const fields = ['text', 'content', 'subject', 'object', 'sourceQuote', 'name', 'predicate'];
  return [
    ...new Set(
      docs.flatMap((d) =>
        fields.map((f) => d[f]).filter((v): v is string => typeof v === 'string' && v.length >= 6),
      ),
    ),
  ].filter((s) => s !== ERASED);
}

describe('eraseDataset', () => {
  it('removes every document of the dataset in every collection, and nothing else', async () => {
    await populate(ERASED, admin);
    await populate(ERASED, globexAdmin);
    const before = await allButAudit();

    // What will be erased: present in every collection the write path uses.
    const doomed = Object.fromEntries(
      Object.entries(before).map(([name, docs]) => [
        name,
        docs.filter((d) => belongsTo(name, d, acmeId, ERASED)),
      ]),
    );
    for (const name of [
      'facts',
      'entities',
      'episodes',
      'memories',
      'factRecords',
      'episodeRecords',
      'memoryVersions',
      'datasets',
    ]) {
      expect(doomed[name]?.length, name).toBeGreaterThan(0);
    }
    const erasedIds = Object.values(doomed).flatMap((docs) => docs.map((d) => String(d._id)));
    const content = contentStrings(Object.values(doomed).flat());
    expect(content).toContain('ERASE-ME memory: the user keeps a diary in Graz.');

    const startedAt = Date.now();
    const counts = data(
      await t.graphql(ErasureEraseDatasetDocument, { name: ERASED }, admin),
    ).eraseDataset;
    // The demo's 8 facts (7 and a corrected version), 5 entities, 3 episodes and 4 memories, plus what
    // populate wrote (the family car restored is a version of its own: its deleted time stays).
    expect(counts).toEqual({
      facts: 10,
      entities: 6,
      episodes: 4,
      memories: 6,
      restoredFacts: 0,
    });
    expect(counts).toEqual({
      facts: doomed.facts!.length,
      entities: doomed.entities!.length,
      episodes: doomed.episodes!.length,
      memories: doomed.memories!.length,
      restoredFacts: 0,
    });

    // Nothing of it remains, in any collection (the audit trail aside).
    const after = await allButAudit();
    for (const [name, docs] of Object.entries(after)) {
      expect(
        await t.database.db
          .collection(name)
          .countDocuments({ workspaceId: acmeId, dataset: ERASED }),
        name,
      ).toBe(0);
      for (const doc of docs) {
        const json = JSON.stringify(doc);
        expect(belongsTo(name, doc, acmeId, ERASED), `${name} ${json}`).toBe(false);
        if (doc.workspaceId === acmeId) expect(json, name).not.toContain(ERASED);
        for (const id of erasedIds) expect(json.includes(id), `${name} mentions ${id}`).toBe(false);
      }
    }

    // Nothing else changed: the other datasets of the workspace, and the same dataset name
    // in another workspace, are exactly as they were.
    const expected = Object.fromEntries(
      Object.entries(before).map(([name, docs]) => [
        name,
        docs.filter((d) => !belongsTo(name, d, acmeId, ERASED)),
      ]),
    );
    expect(after).toEqual(expected);
    expect(after.facts!.some((d) => d.workspaceId === globexId && d.dataset === ERASED)).toBe(true);

    // The API agrees: the dataset is gone for acme, still there for globex.
    const gone = data(
      await t.graphql(CurationLiveFactsDocument, { dataset: ERASED, first: 10 }, reader),
    );
    expect(gone.dataset).toBeNull();
    const stillThere = data(
      await t.graphql(CurationLiveFactsDocument, { dataset: ERASED, first: 10 }, globexAdmin),
    );
    expect(stillThere.dataset?.facts.totalCount).toBeGreaterThan(0);
    const rest = (await (
      await t.request('/api/memories?include_archived=true', { key: reader })
    ).json()) as { id: string; text: string }[];
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.filter((m) => m.text.startsWith('ERASE-ME'))).toEqual([]);

    // Audited: who, when, what, how much; none of the content.
    const audits = (await auditOf('eraseDataset')).filter((a) => a.dataset === ERASED);
    expect(audits).toHaveLength(1);
    const entry = audits[0]!;
    expect(Object.keys(entry).sort()).toEqual(
      ['_id', 'action', 'at', 'counts', 'dataset', 'episodeId', 'keyId', 'workspaceId'].sort(),
    );
    expect(entry).toMatchObject({
      workspaceId: acmeId,
      keyId: adminKeyId,
      action: 'eraseDataset',
      dataset: ERASED,
      episodeId: null,
      counts,
    });
    expect(entry.at.getTime()).toBeGreaterThanOrEqual(startedAt);
    expect(entry.at.getTime()).toBeLessThanOrEqual(Date.now());
    const auditJson = JSON.stringify(await t.database.collections.audit.find({}).toArray());
    for (const text of content) expect(auditJson.includes(text), text).toBe(false);

    // A second call removes nothing, changes nothing, and is audited too.
    const again = data(
      await t.graphql(ErasureEraseDatasetDocument, { name: ERASED }, admin),
    ).eraseDataset;
    expect(again).toEqual({ facts: 0, entities: 0, episodes: 0, memories: 0, restoredFacts: 0 });
    expect(await allButAudit()).toEqual(after);
    const second = (await auditOf('eraseDataset')).filter((a) => a.dataset === ERASED);
    expect(second).toHaveLength(2);
    expect(second[1]).toMatchObject({ keyId: adminKeyId, counts: again });
  });

  it('a dataset that does not exist: zeros, audited, nothing changes', async () => {
    const before = await allButAudit();
    const counts = data(
      await t.graphql(ErasureEraseDatasetDocument, { name: 'never-existed' }, admin),
    ).eraseDataset;
    expect(counts).toEqual({ facts: 0, entities: 0, episodes: 0, memories: 0, restoredFacts: 0 });
    expect(await allButAudit()).toEqual(before);
    expect(
      (await auditOf('eraseDataset')).filter((a) => a.dataset === 'never-existed'),
    ).toHaveLength(1);
  });

  it('needs the admin scope (FORBIDDEN), a key (401) and a name (BAD_USER_INPUT)', async () => {
    const writeOnly = await t.key('acme', ['write']);
    const before = await allDocuments();
    for (const key of [writer, reader, writeOnly]) {
      const result = await t.graphql(ErasureEraseDatasetDocument, { name: DATASET }, key);
      expect(codeOf(result)).toBe('FORBIDDEN');
      expect(result.body.errors![0]!.message).toMatch(/the admin scope/);
    }
    const anonymous = await t.graphql(ErasureEraseDatasetDocument, { name: DATASET }, null);
    expect(anonymous.status).toBe(401);
    expect(codeOf(anonymous)).toBe('UNAUTHENTICATED');
    const empty = await t.graphql(ErasureEraseDatasetDocument, { name: '' }, admin);
    expect(codeOf(empty)).toBe('BAD_USER_INPUT');
    expect(empty.body.errors![0]!.message).toContain('name');
    // Not even an audit entry.
    expect(await allDocuments()).toEqual(before);
  });
});

describe('eraseEpisode', () => {
  const EPISODE = 'e7a1c0de-0000-4000-8000-00000000e001';
  const CONTENT = 'ERASE-EPISODE: I traded the Corolla for a Polestar 2 from Honda dealers.';

  async function fact(id: string, key = reader, dataset = DATASET) {
    return data(await t.graphql(CurationFactDocument, { dataset, id }, key)).dataset!.fact;
  }

  async function entityNames(key = reader, dataset = DATASET) {
    const result = data(await t.graphql(ErasureEntitiesDocument, { dataset, first: 100 }, key));
    return result.dataset!.entities.edges.map((e) => e.node.name);
  }

  async function liveFacts(key = reader, dataset = DATASET) {
    const result = data(await t.graphql(CurationLiveFactsDocument, { dataset, first: 100 }, key));
    return result.dataset!.facts.edges.map((e) => e.node.factId);
  }

  it('removes the episode, its facts and the entities only it named; restores what it superseded', async () => {
    const recorded = await record(
      DATASET,
      episodeInput(
        EPISODE,
        CONTENT,
        [
          {
            subject: 'user',
            predicate: 'is interested in',
            object: 'Polestar 2',
            objectIsEntity: true,
            confidence: 0.9,
            supersedes: [DEMO.facts.toyotaInterest],
          },
          {
            subject: 'Polestar 2',
            predicate: 'is sold by',
            object: 'Honda',
            objectIsEntity: true,
            confidence: 0.4,
          },
        ],
        [
          { name: 'Polestar 2', type: 'PRODUCT' },
          { name: 'Honda', type: 'ORG' },
        ],
      ),
    );
    expect(recorded.alreadyRecorded).toBe(false);
    expect(recorded.supersededIds).toEqual([DEMO.facts.toyotaInterest]);
    const produced = recorded.facts.map((f) => f.factId);
    expect(await fact(DEMO.facts.toyotaInterest)).toMatchObject({
      invalidReason: 'SUPERSEDED',
      supersededBy: { factId: produced[0] },
    });
    expect(await entityNames()).toEqual(expect.arrayContaining(['polestar 2', 'honda']));
    const producedDocIds = (
      await t.database.collections.facts.find({ factId: { $in: produced } }).toArray()
    ).map((f) => f._id);
    expect(producedDocIds).toHaveLength(2);

    const startedAt = Date.now();
    const counts = data(
      await t.graphql(ErasureEraseEpisodeDocument, { dataset: DATASET, id: EPISODE }, admin),
    ).eraseEpisode;
    expect(counts).toEqual({ facts: 2, entities: 1, episodes: 1, memories: 0, restoredFacts: 1 });

    // Gone: the episode, its record, its facts, the entity only it named.
    const db = t.database.collections;
    const scope = { workspaceId: acmeId, dataset: DATASET };
    expect(await db.episodes.countDocuments({ ...scope, episodeId: EPISODE })).toBe(0);
    expect(await db.episodeRecords.countDocuments({ ...scope, episodeId: EPISODE })).toBe(0);
    expect(await db.facts.countDocuments({ ...scope, episodeId: EPISODE })).toBe(0);
    for (const id of produced) expect(await fact(id)).toBeNull();
    const names = await entityNames();
    expect(names).not.toContain('polestar 2');
    // Kept: the entities other facts mention.
    expect(names).toEqual(expect.arrayContaining(['honda', 'user', 'toyota corolla hybrid']));
    // Nothing anywhere (the audit trail aside) still mentions the episode or its facts.
    for (const [name, docs] of Object.entries(await allButAudit())) {
      for (const doc of docs) {
        const json = JSON.stringify(doc);
        for (const needle of [EPISODE, ...produced, ...producedDocIds]) {
          expect(json.includes(needle), `${name} ${json}`).toBe(false);
        }
        expect(json.includes('Polestar'), `${name} ${json}`).toBe(false);
      }
    }

    // The superseded fact is live again, with no trace of its supersession.
    expect(await fact(DEMO.facts.toyotaInterest)).toMatchObject({
      invalidAt: null,
      invalidReason: null,
      supersededBy: null,
      state: 'LIVE',
    });
    expect(await liveFacts()).toContain(DEMO.facts.toyotaInterest);

    // Idempotent: a second call removes nothing and changes nothing.
    const before = await allButAudit();
    const again = data(
      await t.graphql(ErasureEraseEpisodeDocument, { dataset: DATASET, id: EPISODE }, admin),
    ).eraseEpisode;
    expect(again).toEqual({ facts: 0, entities: 0, episodes: 0, memories: 0, restoredFacts: 0 });
    expect(await allButAudit()).toEqual(before);

    // Audited, twice, without the content.
    const audits = (await auditOf('eraseEpisode')).filter((a) => a.episodeId === EPISODE);
    expect(audits).toHaveLength(2);
    expect(audits[0]).toMatchObject({
      workspaceId: acmeId,
      keyId: adminKeyId,
      action: 'eraseEpisode',
      dataset: DATASET,
      episodeId: EPISODE,
      counts,
    });
    expect(Object.keys(audits[0]!).sort()).toEqual(
      ['_id', 'action', 'at', 'counts', 'dataset', 'episodeId', 'keyId', 'workspaceId'].sort(),
    );
    expect(audits[0]!.at.getTime()).toBeGreaterThanOrEqual(startedAt);
    expect(audits[1]).toMatchObject({ counts: again });
    const auditJson = JSON.stringify(await db.audit.find({}).toArray());
    for (const text of [CONTENT, 'Polestar', 'polestar', 'is sold by']) {
      expect(auditJson.includes(text), text).toBe(false);
    }
  });

  it('the restored fact can be superseded, restored by erasure and deleted again', async () => {
    const second = 'e7a1c0de-0000-4000-8000-00000000e002';
    const recorded = await record(
      DATASET,
      episodeInput(second, 'ERASE-EPISODE 2: the Corolla is off, a Kia EV6 now.', [
        {
          subject: 'user',
          predicate: 'is interested in',
          object: 'Kia EV6',
          objectIsEntity: true,
          confidence: 0.8,
          supersedes: [DEMO.facts.toyotaInterest],
        },
      ]),
    );
    expect(recorded.supersededIds).toEqual([DEMO.facts.toyotaInterest]);
    expect(await fact(DEMO.facts.toyotaInterest)).toMatchObject({
      invalidReason: 'SUPERSEDED',
      supersededBy: { factId: recorded.facts[0]!.factId },
    });
    const counts = data(
      await t.graphql(ErasureEraseEpisodeDocument, { dataset: DATASET, id: second }, admin),
    ).eraseEpisode;
    expect(counts).toMatchObject({ facts: 1, episodes: 1, restoredFacts: 1 });
    expect(await fact(DEMO.facts.toyotaInterest)).toMatchObject({ invalidAt: null, state: 'LIVE' });

    // Deleted once, then not found.
    const deleted = data(
      await t.graphql(
        CurationDeleteFactDocument,
        { dataset: DATASET, id: DEMO.facts.toyotaInterest },
        writer,
      ),
    );
    expect(deleted.deleteFact.fact.invalidReason).toBe('DELETED');
    const twice = await t.graphql(
      CurationDeleteFactDocument,
      { dataset: DATASET, id: DEMO.facts.toyotaInterest },
      writer,
    );
    expect(codeOf(twice)).toBe('NOT_FOUND');
    expect(await liveFacts()).not.toContain(DEMO.facts.toyotaInterest);
  });

  it('a re-recorded episode after its erasure behaves like a new one (delete, restore)', async () => {
    const id = 'e7a1c0de-0000-4000-8000-00000000e003';
    const input = episodeInput(id, 'ERASE-EPISODE 3: I ride a bicycle to work.', [
      { subject: 'user', predicate: 'commutes by', object: 'bicycle', confidence: 0.9 },
    ]);
    const first = await record(DATASET, input);
    const factId = first.facts[0]!.factId;
    data(await t.graphql(CurationDeleteFactDocument, { dataset: DATASET, id: factId }, writer));
    data(await t.graphql(CurationRestoreFactDocument, { dataset: DATASET, id: factId }, admin));
    data(await t.graphql(ErasureEraseEpisodeDocument, { dataset: DATASET, id }, admin));
    const db = t.database.collections;
    expect(await db.factRecords.countDocuments({ factId })).toBe(0);

    const again = await record(DATASET, input);
    expect(again.alreadyRecorded).toBe(false);
    expect(again.facts[0]!.factId).toBe(factId);
    data(await t.graphql(CurationDeleteFactDocument, { dataset: DATASET, id: factId }, writer));
    const restored = data(
      await t.graphql(CurationRestoreFactDocument, { dataset: DATASET, id: factId }, admin),
    ).restoreFact;
    // Believed again as a new version of it: the time it was deleted stays in its history.
    expect(restored).toMatchObject({
      correctionOf: { factId },
      invalidAt: null,
      state: 'LIVE',
    });
  });

  it('erasing an imported episode restores the fact it superseded (imported claims)', async () => {
    const counts = data(
      await t.graphql(
        ErasureEraseEpisodeDocument,
        { dataset: DATASET, id: DEMO.episodes.toyota },
        globexAdmin,
      ),
    ).eraseEpisode;
    // Its two facts (the Toyota interest and the test drive) and the Toyota entity.
    expect(counts).toEqual({ facts: 2, entities: 1, episodes: 1, memories: 0, restoredFacts: 1 });
    expect(await fact(DEMO.facts.hondaInterest, globexAdmin)).toMatchObject({
      invalidAt: null,
      supersededBy: null,
      state: 'LIVE',
    });
    expect(await fact(DEMO.facts.toyotaInterest, globexAdmin)).toBeNull();
    expect(await entityNames(globexAdmin)).not.toContain('toyota corolla hybrid');
    // acme's copy of the same episode is untouched.
    expect(await fact(DEMO.facts.hondaInterest)).toMatchObject({ invalidReason: 'SUPERSEDED' });
    expect(await entityNames()).toContain('toyota corolla hybrid');
    // The restored fact can be superseded again, once.
    const next = await record(
      DATASET,
      episodeInput('e7a1c0de-0000-4000-8000-00000000e004', 'ERASE-EPISODE 4: no Civic.', [
        {
          subject: 'user',
          predicate: 'is interested in',
          object: 'a bicycle',
          confidence: 0.5,
          supersedes: [DEMO.facts.hondaInterest],
        },
      ]),
      globexAdmin,
    );
    expect(next.supersededIds).toEqual([DEMO.facts.hondaInterest]);
    expect(await fact(DEMO.facts.hondaInterest, globexAdmin)).toMatchObject({
      state: 'SUPERSEDED',
    });
  });

  it('an unknown episode: zeros and audited', async () => {
    const unknown = '99999999-9999-4999-8999-999999999999';
    const before = await allButAudit();
    const counts = data(
      await t.graphql(ErasureEraseEpisodeDocument, { dataset: DATASET, id: unknown }, admin),
    ).eraseEpisode;
    expect(counts).toEqual({ facts: 0, entities: 0, episodes: 0, memories: 0, restoredFacts: 0 });
    expect(await allButAudit()).toEqual(before);
    expect((await auditOf('eraseEpisode')).filter((a) => a.episodeId === unknown)).toHaveLength(1);
  });

  it('needs the admin scope (FORBIDDEN), a key (401) and a UUID (BAD_USER_INPUT)', async () => {
    const writeOnly = await t.key('acme', ['write']);
    const before = await allDocuments();
    for (const key of [writer, reader, writeOnly]) {
      const result = await t.graphql(
        ErasureEraseEpisodeDocument,
        { dataset: DATASET, id: DEMO.episodes.toyota },
        key,
      );
      expect(codeOf(result)).toBe('FORBIDDEN');
    }
    const anonymous = await t.graphql(
      ErasureEraseEpisodeDocument,
      { dataset: DATASET, id: DEMO.episodes.toyota },
      null,
    );
    expect(anonymous.status).toBe(401);
    expect(codeOf(anonymous)).toBe('UNAUTHENTICATED');
    const badId = await t.graphql(
      ErasureEraseEpisodeDocument,
      { dataset: DATASET, id: 'x' },
      admin,
    );
    expect(codeOf(badId)).toBe('BAD_USER_INPUT');
    expect(badId.body.errors![0]!.message).toContain('id');
    expect(await allDocuments()).toEqual(before);
    // The memories of the dataset are untouched by any of it.
    const memories = data(
      await t.graphql(
        CurationDatasetMemoriesDocument,
        { dataset: DATASET, includeArchived: true, first: 100 },
        reader,
      ),
    );
    // Three live (one of them archived); the fourth was superseded.
    expect(memories.dataset?.memories.totalCount).toBe(3);
  });
});
