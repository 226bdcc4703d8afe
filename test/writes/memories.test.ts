import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { MongoClient } from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { collections } from '../../src/store/collections.js';
import type { MemoryDoc } from '../../src/store/documents.js';
import {
  changeMemory,
  MemoryConflictError,
  supersedeMemory,
} from '../../src/store/memoryWrites.js';
import { workspaceIdFor } from '../../src/store/workspaces.js';
import {
  CurationArchiveMemoryDocument,
  type CurationArchiveMemoryMutationVariables,
  CurationCreateMemoryDocument,
  CurationDatasetMemoriesDocument,
  type CurationMemoryFieldsFragment,
  CurationPinMemoryDocument,
  CurationSupersedeMemoryDocument,
  CurationUnarchiveMemoryDocument,
  CurationUnpinMemoryDocument,
  CurationUpdateMemoryDocument,
  type MemoryInput,
} from '../generated/operations.js';
import { testServerUri } from '../helpers/database.js';
import { DEMO } from '../helpers/demo.js';
import { type GraphqlError, openTestGateway, type TestGateway } from '../helpers/gateway.js';
import { memoryInput } from '../helpers/memoryInput.js';

/**
 * Memory curation (SupaCloud's model): createMemory, updateMemory with optimistic
 * concurrency, archive / unarchive / pin / unpin, supersedeMemory; the version claims that
 * make each version happen once even when writers race over separate connections, and
 * the repair of a version whose apply was cut short.
 */

const DATASET = 'user_42';
const WORKSPACE = 'acme';
const tenant = { workspaceId: workspaceIdFor(WORKSPACE), dataset: DATASET };
const USER = DEMO.entities.user.toUpperCase();
const PROJECT = '0b7a4c1e-2d3f-4a5b-8c6d-7e8f9a0b1c2d';

let t: TestGateway;
let writer: string;
let reader: string;
/** Extra connections, so racing writers really use different sockets (as replicas would). */
let clients: MongoClient[] = [];

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [WORKSPACE] });
  writer = await t.key(WORKSPACE, ['read', 'write']);
  reader = await t.key(WORKSPACE, ['read']);
  clients = await Promise.all(
    Array.from({ length: 8 }, () => new MongoClient(testServerUri()).connect()),
  );
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The store over the i-th extra connection. */
const storeOn = (i: number) => collections(clients[i]!.db(t.database.db.databaseName));

/** archive / unarchive / pin / unpin: the same variables, one memory back. */
type Versioned = TypedDocumentNode<
  Record<string, CurationMemoryFieldsFragment>,
  CurationArchiveMemoryMutationVariables
>;

type Result<T> = { status: number; body: { data?: T | null; errors?: GraphqlError[] } };

function data<T>(result: Result<T>): T {
  expect(result.body.errors).toBeUndefined();
  expect(result.status).toBe(200);
  return result.body.data!;
}

function errorOf<T>(result: Result<T>): GraphqlError {
  expect(result.body.errors?.length).toBeGreaterThan(0);
  return result.body.errors![0]!;
}

const input = (over: Partial<MemoryInput> = {}): MemoryInput => ({
  text: 'The user drinks oat milk.',
  memoryKind: 'preference',
  scope: 'user',
  sourceType: 'conversation',
  ...over,
});

async function create(over: Partial<MemoryInput> = {}, dataset = DATASET) {
  return data(
    await t.graphql(CurationCreateMemoryDocument, { dataset, input: input(over) }, writer),
  ).createMemory;
}

/** The stored memory and its version claims, for "nothing changed" comparisons. */
async function snapshot(memoryId: string) {
  const db = t.database.collections;
  const memory = await db.memories.findOne({ memoryId, workspaceId: tenant.workspaceId });
  const versions = await db.memoryVersions
    .find({ memoryId, workspaceId: tenant.workspaceId })
    .sort({ version: 1 })
    .toArray();
  return { memory, versions };
}

async function stored(memoryId: string): Promise<MemoryDoc> {
  const doc = await t.database.collections.memories.findOne({
    memoryId,
    workspaceId: tenant.workspaceId,
    dataset: DATASET,
  });
  expect(doc).not.toBeNull();
  return doc!;
}

async function versionsOf(memoryId: string): Promise<number[]> {
  return (await snapshot(memoryId)).versions.map((v) => v.version);
}

async function liveView(includeArchived = false, asOf?: string, dataset = DATASET) {
  const result = data(
    await t.graphql(
      CurationDatasetMemoriesDocument,
      { dataset, includeArchived, asOf, first: 100 },
      reader,
    ),
  );
  const memories = result.dataset?.memories;
  // One page holds them all, so "not in the list" means not in the view.
  expect(memories?.edges.length ?? 0).toBe(memories?.totalCount ?? 0);
  return memories?.edges.map((e) => e.node) ?? [];
}

async function restMemories(query = ''): Promise<{ id: string; [k: string]: unknown }[]> {
  const response = await t.request(`/api/memories${query}`, { key: reader });
  expect(response.status).toBe(200);
  return response.json();
}

const ids = (list: { memoryId: string }[]) => list.map((m) => m.memoryId);

const storeInput = (text: string) => memoryInput(text);

describe('createMemory', () => {
  it('creates version 1, valid from now, with the fields as given', async () => {
    const before = Date.now();
    const m = await create({
      text: '  The user is vegetarian.  ',
      memoryKind: 'fact',
      scope: 'project',
      sourceType: 'manual',
      userId: USER,
      projectId: PROJECT,
      importance: 0.9,
      salience: 0.1,
      pinned: true,
    });
    const after = Date.now();
    expect(m).toMatchObject({
      dataset: DATASET,
      workspaceId: tenant.workspaceId,
      text: 'The user is vegetarian.',
      memoryKind: 'fact',
      scope: 'project',
      sourceType: 'manual',
      sourceId: null,
      userId: USER.toLowerCase(),
      projectId: PROJECT,
      importance: 0.9,
      salience: 0.1,
      pinned: true,
      version: 1,
      archivedAt: null,
      lastUsedAt: null,
      validUntil: null,
      supersededBy: null,
    });
    const validFrom = Date.parse(m.validFrom);
    expect(validFrom).toBeGreaterThanOrEqual(before);
    expect(validFrom).toBeLessThanOrEqual(after);
    expect(m.createdAt).toBe(m.validFrom);
    expect(m.updatedAt).toBe(m.createdAt);
    // Stored as answered, and in the live view of the dataset and of SupaCloud's route.
    const doc = await stored(m.memoryId);
    expect(doc.version).toBe(1);
    expect(doc.validFrom.toISOString()).toBe(m.validFrom);
    expect(ids(await liveView())).toContain(m.memoryId);
    const rest = (await restMemories()).find((r) => r.id === m.memoryId);
    expect(rest).toMatchObject({ text: 'The user is vegetarian.', version: 1, pinned: true });
    // Defaults: importance and salience 0.5, not pinned.
    const plain = await create();
    expect(plain).toMatchObject({ importance: 0.5, salience: 0.5, pinned: false, version: 1 });
  });

  it('keeps a given validFrom', async () => {
    const m = await create({ validFrom: '2026-02-03T04:05:06.000Z' });
    expect(m.validFrom).toBe('2026-02-03T04:05:06.000Z');
    expect((await stored(m.memoryId)).validFrom.toISOString()).toBe('2026-02-03T04:05:06.000Z');
  });

  it('with a memoryId: a retry with the same content returns the same memory; other content is a CONFLICT', async () => {
    const memoryId = 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D';
    const first = await create({ memoryId, text: 'The user has a dog named Rex.' });
    expect(first.memoryId).toBe(memoryId.toLowerCase());
    const retry = await create({ memoryId, text: 'The user has a dog named Rex.' });
    expect(retry).toEqual(first);
    const count = await t.database.collections.memories.countDocuments({
      memoryId: memoryId.toLowerCase(),
    });
    expect(count).toBe(1);

    const before = await snapshot(first.memoryId);
    const other = await t.graphql(
      CurationCreateMemoryDocument,
      { dataset: DATASET, input: input({ memoryId, text: 'The user has a cat.' }) },
      writer,
    );
    expect(errorOf(other).extensions?.code).toBe('CONFLICT');
    expect(other.body.data).toBeNull();
    expect(await snapshot(first.memoryId)).toEqual(before);
  });

  it('the same memoryId in another dataset is another memory', async () => {
    const memoryId = 'b1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
    await create({ memoryId, text: 'In user_42.' });
    const elsewhere = await create({ memoryId, text: 'In user_99.' }, 'user_99');
    expect(elsewhere).toMatchObject({ dataset: 'user_99', text: 'In user_99.', version: 1 });
    expect((await stored(memoryId)).text).toBe('In user_42.');
  });

  it('a memory created in a new dataset is listed by that dataset', async () => {
    const m = await create({ text: 'First memory of a new dataset.' }, 'brand new/dataset ü');
    const listed = await liveView(false, undefined, 'brand new/dataset ü');
    expect(ids(listed)).toEqual([m.memoryId]);
  });
});

describe('updateMemory', () => {
  it('changes the given fields as the next version, and keeps the others', async () => {
    const m = await create({ text: 'The user likes jazz.', importance: 0.3 });
    const updated = data(
      await t.graphql(
        CurationUpdateMemoryDocument,
        {
          dataset: DATASET,
          memoryId: m.memoryId,
          patch: { text: ' The user loves jazz. ', importance: 0.8 },
        },
        writer,
      ),
    ).updateMemory;
    expect(updated).toMatchObject({
      memoryId: m.memoryId,
      text: 'The user loves jazz.',
      importance: 0.8,
      salience: m.salience,
      memoryKind: m.memoryKind,
      version: 2,
      createdAt: m.createdAt,
      validFrom: m.validFrom,
    });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(m.updatedAt));
    const doc = await stored(m.memoryId);
    expect(doc).toMatchObject({ text: 'The user loves jazz.', importance: 0.8, version: 2 });
    expect(await versionsOf(m.memoryId)).toEqual([2]);

    // With the right expectedVersion it goes through.
    const third = data(
      await t.graphql(
        CurationUpdateMemoryDocument,
        { dataset: DATASET, memoryId: m.memoryId, expectedVersion: 2, patch: { salience: 0.2 } },
        writer,
      ),
    ).updateMemory;
    expect(third).toMatchObject({ version: 3, salience: 0.2, text: 'The user loves jazz.' });
    expect(await versionsOf(m.memoryId)).toEqual([2, 3]);
  });

  it('a patch that changes nothing (empty, or the values as they are) keeps the version and writes nothing', async () => {
    const m = await create({ text: 'The user drinks tea.', importance: 0.4 });
    const before = await snapshot(m.memoryId);
    for (const patch of [
      {},
      { text: 'The user drinks tea.' },
      { text: ' The user drinks tea. ', importance: 0.4 },
    ]) {
      const same = data(
        await t.graphql(
          CurationUpdateMemoryDocument,
          { dataset: DATASET, memoryId: m.memoryId, expectedVersion: 1, patch },
          writer,
        ),
      ).updateMemory;
      expect(same).toMatchObject({
        version: 1,
        text: 'The user drinks tea.',
        updatedAt: m.updatedAt,
      });
    }
    expect(await snapshot(m.memoryId)).toEqual(before);
    expect(await versionsOf(m.memoryId)).toEqual([]);
    // Another client's expectedVersion still holds.
    const changed = data(
      await t.graphql(
        CurationUpdateMemoryDocument,
        { dataset: DATASET, memoryId: m.memoryId, expectedVersion: 1, patch: { importance: 0.5 } },
        writer,
      ),
    ).updateMemory;
    expect(changed.version).toBe(2);
  });

  it('a demo memory at version 2 goes to version 3', async () => {
    const updated = data(
      await t.graphql(
        CurationUpdateMemoryDocument,
        {
          dataset: DATASET,
          memoryId: DEMO.memories.shortAnswers,
          expectedVersion: 2,
          patch: { text: 'The user prefers very short answers.' },
        },
        writer,
      ),
    ).updateMemory;
    expect(updated).toMatchObject({ version: 3, text: 'The user prefers very short answers.' });
  });

  it('with a wrong expectedVersion: CONFLICT, and nothing changes', async () => {
    const m = await create({ text: 'The user is left-handed.' });
    await t.graphql(
      CurationUpdateMemoryDocument,
      { dataset: DATASET, memoryId: m.memoryId, patch: { text: 'The user is ambidextrous.' } },
      writer,
    );
    const before = await snapshot(m.memoryId);
    expect(before.memory?.version).toBe(2);
    for (const expectedVersion of [1, 3, 99]) {
      const result = await t.graphql(
        CurationUpdateMemoryDocument,
        { dataset: DATASET, memoryId: m.memoryId, expectedVersion, patch: { text: 'changed' } },
        writer,
      );
      const error = errorOf(result);
      expect(error.extensions?.code).toBe('CONFLICT');
      expect(error.message).toMatch(/version 2/);
      expect(result.body.data).toBeNull();
    }
    for (const doc of [CurationArchiveMemoryDocument, CurationPinMemoryDocument] as Versioned[]) {
      const result = await t.graphql(
        doc,
        { dataset: DATASET, memoryId: m.memoryId, expectedVersion: 1 },
        writer,
      );
      expect(errorOf(result).extensions?.code).toBe('CONFLICT');
    }
    expect(await snapshot(m.memoryId)).toEqual(before);
  });

  it('an unknown memory, or one of another dataset, is NOT_FOUND', async () => {
    const m = await create({ text: 'Only in user_42.' });
    for (const [dataset, memoryId] of [
      [DATASET, '99999999-9999-4999-8999-999999999999'],
      ['user_43', m.memoryId],
    ] as const) {
      const result = await t.graphql(
        CurationUpdateMemoryDocument,
        { dataset, memoryId, patch: { text: 'x' } },
        writer,
      );
      expect(errorOf(result).extensions?.code).toBe('NOT_FOUND');
    }
    const other = await t.key('globex', ['read', 'write']);
    const result = await t.graphql(
      CurationPinMemoryDocument,
      { dataset: DATASET, memoryId: m.memoryId },
      other,
    );
    expect(errorOf(result).extensions?.code).toBe('NOT_FOUND');
    expect((await stored(m.memoryId)).version).toBe(1);
  });
});

describe('archive, unarchive, pin, unpin', () => {
  it('each bumps the version and shows in the live view, includeArchived and GET /api/memories', async () => {
    const m = await create({ text: 'The user works night shifts.' });
    const step = async (doc: Versioned) => {
      const result = data(await t.graphql(doc, { dataset: DATASET, memoryId: m.memoryId }, writer));
      return Object.values(result)[0]!;
    };

    const archived = await step(CurationArchiveMemoryDocument);
    expect(archived.version).toBe(2);
    expect(archived.archivedAt).not.toBeNull();
    expect(ids(await liveView())).not.toContain(m.memoryId);
    const withArchived = (await liveView(true)).find((x) => x.memoryId === m.memoryId);
    expect(withArchived).toMatchObject({ archivedAt: archived.archivedAt, version: 2 });
    expect((await restMemories()).map((r) => r.id)).not.toContain(m.memoryId);
    expect(
      (await restMemories('?include_archived=true')).find((r) => r.id === m.memoryId),
    ).toMatchObject({ archived_at: archived.archivedAt, version: 2 });

    // Archiving an archived memory is a no-op: no new version, nothing rewritten.
    const before = await snapshot(m.memoryId);
    const again = await step(CurationArchiveMemoryDocument);
    expect(again).toMatchObject({ version: 2, archivedAt: archived.archivedAt });
    expect(await snapshot(m.memoryId)).toEqual(before);

    const unarchived = await step(CurationUnarchiveMemoryDocument);
    expect(unarchived).toMatchObject({ version: 3, archivedAt: null });
    expect(ids(await liveView())).toContain(m.memoryId);
    expect((await restMemories()).find((r) => r.id === m.memoryId)).toMatchObject({
      archived_at: null,
      version: 3,
      pinned: false,
    });
    const unarchivedAgain = await snapshot(m.memoryId);
    expect(await step(CurationUnarchiveMemoryDocument)).toMatchObject({ version: 3 });
    expect(await snapshot(m.memoryId)).toEqual(unarchivedAgain);

    const pinned = await step(CurationPinMemoryDocument);
    expect(pinned).toMatchObject({ version: 4, pinned: true });
    expect((await liveView()).find((x) => x.memoryId === m.memoryId)).toMatchObject({
      pinned: true,
      version: 4,
    });
    expect((await restMemories()).find((r) => r.id === m.memoryId)).toMatchObject({
      pinned: true,
      version: 4,
    });
    const pinnedSnapshot = await snapshot(m.memoryId);
    expect(await step(CurationPinMemoryDocument)).toMatchObject({ version: 4, pinned: true });
    expect(await snapshot(m.memoryId)).toEqual(pinnedSnapshot);

    const unpinned = await step(CurationUnpinMemoryDocument);
    expect(unpinned).toMatchObject({ version: 5, pinned: false });
    expect((await restMemories()).find((r) => r.id === m.memoryId)).toMatchObject({
      pinned: false,
      version: 5,
    });
    const unpinnedSnapshot = await snapshot(m.memoryId);
    expect(await step(CurationUnpinMemoryDocument)).toMatchObject({ version: 5 });
    expect(await snapshot(m.memoryId)).toEqual(unpinnedSnapshot);
    expect(unpinnedSnapshot.versions.map((v) => v.version)).toEqual([2, 3, 4, 5]);
  });

  it('an archived memory still shows with includeArchived after other changes', async () => {
    const m = await create({ text: 'The user is allergic to nuts.' });
    await t.graphql(
      CurationArchiveMemoryDocument,
      { dataset: DATASET, memoryId: m.memoryId },
      writer,
    );
    const pinned = data(
      await t.graphql(
        CurationPinMemoryDocument,
        { dataset: DATASET, memoryId: m.memoryId, expectedVersion: 2 },
        writer,
      ),
    ).pinMemory;
    expect(pinned).toMatchObject({ version: 3, pinned: true });
    expect(pinned.archivedAt).not.toBeNull();
    expect(ids(await liveView())).not.toContain(m.memoryId);
    expect(ids(await liveView(true))).toContain(m.memoryId);
  });
});

describe('supersedeMemory', () => {
  it('stamps the old memory and creates its successor, valid from now, at version 1', async () => {
    const old = await create({
      text: 'The user lives in Hamburg.',
      validFrom: '2026-01-01T00:00:00.000Z',
      pinned: true,
    });
    const before = Date.now();
    const { previous, memory } = data(
      await t.graphql(
        CurationSupersedeMemoryDocument,
        {
          dataset: DATASET,
          memoryId: old.memoryId,
          expectedVersion: 1,
          input: input({
            text: 'The user lives in Munich.',
            memoryKind: 'fact',
            importance: 0.7,
            // Ignored: the successor is valid from now.
            validFrom: '2020-01-01T00:00:00.000Z',
          }),
        },
        writer,
      ),
    ).supersedeMemory;
    const after = Date.now();

    expect(previous).toMatchObject({
      memoryId: old.memoryId,
      text: 'The user lives in Hamburg.',
      version: 2,
      supersededBy: memory.memoryId,
      pinned: true,
      validFrom: old.validFrom,
    });
    expect(previous.validUntil).not.toBeNull();
    const stamped = Date.parse(previous.validUntil!);
    expect(stamped).toBeGreaterThanOrEqual(before);
    expect(stamped).toBeLessThanOrEqual(after);

    expect(memory.memoryId).not.toBe(old.memoryId);
    expect(memory).toMatchObject({
      text: 'The user lives in Munich.',
      memoryKind: 'fact',
      importance: 0.7,
      version: 1,
      validFrom: previous.validUntil,
      validUntil: null,
      supersededBy: null,
      archivedAt: null,
    });

    // Stored that way.
    const doc = await stored(old.memoryId);
    expect(doc.supersededBy).toBe(memory.memoryId);
    expect(doc.validUntil?.toISOString()).toBe(previous.validUntil);
    expect((await stored(memory.memoryId)).version).toBe(1);

    // The live view (and SupaCloud's) has the successor, not the old one, even with archived.
    for (const view of [await liveView(), await liveView(true)]) {
      expect(ids(view)).toContain(memory.memoryId);
      expect(ids(view)).not.toContain(old.memoryId);
    }
    const rest = (await restMemories()).map((r) => r.id);
    expect(rest).toContain(memory.memoryId);
    expect(rest).not.toContain(old.memoryId);

    // As of before the supersede, the old one was valid and the successor was not yet.
    const earlier = new Date(before - 1000).toISOString();
    const then = ids(await liveView(false, earlier));
    expect(then).toContain(old.memoryId);
    expect(then).not.toContain(memory.memoryId);
    const restThen = (await restMemories(`?as_of=${encodeURIComponent(earlier)}`)).map((r) => r.id);
    expect(restThen).toContain(old.memoryId);
    expect(restThen).not.toContain(memory.memoryId);
    const now = ids(await liveView(false, new Date(after + 1000).toISOString()));
    expect(now).toContain(memory.memoryId);
    expect(now).not.toContain(old.memoryId);

    // Superseded at most once.
    const beforeSecond = await snapshot(old.memoryId);
    const count = await t.database.collections.memories.countDocuments({});
    const second = await t.graphql(
      CurationSupersedeMemoryDocument,
      { dataset: DATASET, memoryId: old.memoryId, input: input({ text: 'Berlin.' }) },
      writer,
    );
    expect(errorOf(second).extensions?.code).toBe('CONFLICT');
    expect(await snapshot(old.memoryId)).toEqual(beforeSecond);
    expect(await t.database.collections.memories.countDocuments({})).toBe(count);
  });

  it('the demo memory already superseded cannot be superseded again', async () => {
    const result = await t.graphql(
      CurationSupersedeMemoryDocument,
      {
        dataset: DATASET,
        memoryId: DEMO.memories.hondaCivic,
        input: input({ text: 'The user wants a Civic after all.' }),
      },
      writer,
    );
    expect(errorOf(result).extensions?.code).toBe('CONFLICT');
  });

  it('two concurrent supersedes over GraphQL: one wins, one CONFLICT, one successor', async () => {
    for (let round = 0; round < 5; round++) {
      const old = await create({ text: `Round ${round}: the user drives a bike.` });
      const count = await t.database.collections.memories.countDocuments({});
      const results = await Promise.all(
        ['car', 'train'].map((how) =>
          t.graphql(
            CurationSupersedeMemoryDocument,
            {
              dataset: DATASET,
              memoryId: old.memoryId,
              expectedVersion: round % 2 === 0 ? 1 : null,
              input: input({ text: `Round ${round}: the user takes the ${how}.` }),
            },
            writer,
          ),
        ),
      );
      const winners = results.filter((r) => !r.body.errors);
      expect(winners).toHaveLength(1);
      const loser = results.find((r) => r.body.errors)!;
      expect(errorOf(loser).extensions?.code).toBe('CONFLICT');
      const successor = winners[0]!.body.data!.supersedeMemory.memory;
      expect(await t.database.collections.memories.countDocuments({})).toBe(count + 1);
      const doc = await stored(old.memoryId);
      expect(doc).toMatchObject({ version: 2, supersededBy: successor.memoryId });
      expect((await stored(successor.memoryId)).text).toBe(successor.text);
      expect(await versionsOf(old.memoryId)).toEqual([2]);
    }
  });

  it('concurrent supersedes over separate connections: exactly one successor', async () => {
    for (let round = 0; round < 5; round++) {
      const old = await create({ text: `Round ${round}: the user is a student.` });
      const count = await t.database.collections.memories.countDocuments({});
      const results = await Promise.allSettled(
        clients
          .slice(0, 4)
          .map((_, i) =>
            supersedeMemory(
              storeOn(i),
              tenant,
              old.memoryId,
              null,
              storeInput(`Round ${round}: writer ${i} says the user graduated.`),
              new Date(),
            ),
          ),
      );
      const fulfilled = results.filter((r) => r.status === 'fulfilled');
      expect(fulfilled).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(MemoryConflictError);
      }
      const previous = (fulfilled[0] as PromiseFulfilledResult<MemoryDoc>).value;
      expect(await t.database.collections.memories.countDocuments({})).toBe(count + 1);
      const doc = await stored(old.memoryId);
      expect(doc.supersededBy).toBe(previous.supersededBy);
      expect(doc.version).toBe(2);
      const successor = await stored(previous.supersededBy!);
      expect(successor.version).toBe(1);
      expect(successor.text).toMatch(new RegExp(`^Round ${round}: writer \\d says`));
    }
  });
});

describe('updateMemory races', () => {
  it('two updates from the same version over separate connections: one wins, one CONFLICT (10 rounds)', async () => {
    const m = await create({ text: 'Race start.' });
    for (let round = 0; round < 10; round++) {
      const version = round + 1;
      const results = await Promise.allSettled(
        [0, 1].map((i) =>
          changeMemory(
            storeOn(i),
            tenant,
            m.memoryId,
            version,
            () => ({ set: { text: `round ${round} writer ${i}` } }),
            new Date(),
          ),
        ),
      );
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(won).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(MemoryConflictError);
      const doc = await stored(m.memoryId);
      expect(doc.version).toBe(version + 1);
      expect(doc.text).toBe(`round ${round} writer ${won[0]}`);
    }
    expect(await versionsOf(m.memoryId)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('two concurrent GraphQL updates with the same expectedVersion: one wins (10 rounds)', async () => {
    const m = await create({ text: 'GraphQL race start.' });
    for (let round = 0; round < 10; round++) {
      const version = round + 1;
      const results = await Promise.all(
        ['a', 'b'].map((who) =>
          t.graphql(
            CurationUpdateMemoryDocument,
            {
              dataset: DATASET,
              memoryId: m.memoryId,
              expectedVersion: version,
              patch: { text: `round ${round} writer ${who}` },
            },
            writer,
          ),
        ),
      );
      const winners = results.filter((r) => !r.body.errors);
      expect(winners).toHaveLength(1);
      const loser = results.find((r) => r.body.errors)!;
      expect(errorOf(loser).extensions?.code).toBe('CONFLICT');
      const winner = winners[0]!.body.data!.updateMemory;
      expect(winner.version).toBe(version + 1);
      const doc = await stored(m.memoryId);
      expect(doc.version).toBe(version + 1);
      expect(doc.text).toBe(winner.text);
    }
    expect(await versionsOf(m.memoryId)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('without expectedVersion, N concurrent updates all land as distinct versions', async () => {
    const N = 6;
    for (let round = 0; round < 3; round++) {
      const m = await create({ text: `No-version race ${round}.` });
      const results = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          changeMemory(
            storeOn(i),
            tenant,
            m.memoryId,
            null,
            () => ({ set: { text: `round ${round} writer ${i}` } }),
            new Date(),
          ),
        ),
      );
      // Every writer got its own version, 2..N+1.
      expect(results.map((r) => r.version).sort((a, b) => a - b)).toEqual(
        Array.from({ length: N }, (_, i) => i + 2),
      );
      const { memory, versions } = await snapshot(m.memoryId);
      expect(versions.map((v) => v.version)).toEqual(Array.from({ length: N }, (_, i) => i + 2));
      // The memory ends at the last version, with that version's value: no lost update.
      expect(memory?.version).toBe(1 + N);
      const last = versions.at(-1)!;
      expect(memory?.text).toBe(last.set.text);
      expect(results.find((r) => r.version === 1 + N)?.text).toBe(memory?.text);
    }
  });

  it('each version is written once, by its claimer: losers wait for it instead of rewriting it', async () => {
    // On FerretDB an update reads the document and writes it back whole, so a loser that
    // re-applied the winner's version could land its write after a later version and undo
    // it. Losers therefore only complete a version whose claimer did not (a crash).
    const N = 6;
    const m = await create({ text: 'Written once.' });
    const stores = Array.from({ length: N }, (_, i) => storeOn(i));
    const spies = stores.map((s) => vi.spyOn(s.memories, 'updateOne'));
    await Promise.all(
      stores.map((s, i) =>
        changeMemory(s, tenant, m.memoryId, null, () => ({ set: { text: `w${i}` } }), new Date()),
      ),
    );
    expect((await stored(m.memoryId)).version).toBe(1 + N);
    expect(spies.reduce((n, spy) => n + spy.mock.calls.length, 0)).toBe(N);
  });
});

describe('a crash between the version claim and its apply', () => {
  /** Makes the next write of a memory fail, as a crash after the claim would. */
  const crashNextApply = () =>
    vi
      .spyOn(t.database.collections.memories, 'updateOne')
      .mockRejectedValueOnce(new Error('simulated crash'));

  it('the next change completes the pending version, and versions stay consecutive', async () => {
    const m = await create({ text: 'Before the crash.' });
    const spy = crashNextApply();
    const crashed = await t.graphql(
      CurationUpdateMemoryDocument,
      {
        dataset: DATASET,
        memoryId: m.memoryId,
        expectedVersion: 1,
        patch: { text: 'Written by the crashed request.' },
      },
      writer,
    );
    expect(errorOf(crashed).extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect(errorOf(crashed).message).not.toMatch(/simulated/);
    expect(spy).toHaveBeenCalledTimes(1);
    // The claim is there, the memory does not carry it yet.
    expect((await stored(m.memoryId)).version).toBe(1);
    expect(await versionsOf(m.memoryId)).toEqual([2]);

    const pinned = data(
      await t.graphql(
        CurationPinMemoryDocument,
        { dataset: DATASET, memoryId: m.memoryId },
        writer,
      ),
    ).pinMemory;
    expect(pinned).toMatchObject({
      version: 3,
      pinned: true,
      text: 'Written by the crashed request.',
    });
    const doc = await stored(m.memoryId);
    expect(doc).toMatchObject({
      version: 3,
      pinned: true,
      text: 'Written by the crashed request.',
    });
    expect(await versionsOf(m.memoryId)).toEqual([2, 3]);
  });

  it('a retry completes the pending version once (and reports that it was taken)', async () => {
    const m = await create({ text: 'Before the crash.' });
    crashNextApply();
    const variables = {
      dataset: DATASET,
      memoryId: m.memoryId,
      expectedVersion: 1,
      patch: { text: 'Retried text.' },
    };
    const crashed = await t.graphql(CurationUpdateMemoryDocument, variables, writer);
    expect(errorOf(crashed).extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    const retry = await t.graphql(CurationUpdateMemoryDocument, variables, writer);
    expect(errorOf(retry).extensions?.code).toBe('CONFLICT');
    // The change is applied exactly once: version 2 with the text, no version 3.
    expect(await stored(m.memoryId)).toMatchObject({ version: 2, text: 'Retried text.' });
    expect(await versionsOf(m.memoryId)).toEqual([2]);
    // And the next change builds on it.
    const next = data(
      await t.graphql(
        CurationUpdateMemoryDocument,
        { ...variables, expectedVersion: 2, patch: { importance: 1 } },
        writer,
      ),
    ).updateMemory;
    expect(next).toMatchObject({ version: 3, text: 'Retried text.', importance: 1 });
    expect(await versionsOf(m.memoryId)).toEqual([2, 3]);
  });

  it('a supersede cut short is completed by the next attempt, with one successor', async () => {
    const old = await create({ text: 'The user owns a Fiat.' });
    const count = await t.database.collections.memories.countDocuments({});
    crashNextApply();
    const crashed = await t.graphql(
      CurationSupersedeMemoryDocument,
      {
        dataset: DATASET,
        memoryId: old.memoryId,
        input: input({ text: 'The user owns a Tesla.' }),
      },
      writer,
    );
    expect(errorOf(crashed).extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    expect((await stored(old.memoryId)).supersededBy).toBeNull();

    const again = await t.graphql(
      CurationSupersedeMemoryDocument,
      { dataset: DATASET, memoryId: old.memoryId, input: input({ text: 'The user owns a BMW.' }) },
      writer,
    );
    expect(errorOf(again).extensions?.code).toBe('CONFLICT');
    const doc = await stored(old.memoryId);
    expect(doc.version).toBe(2);
    expect(doc.validUntil).not.toBeNull();
    expect(await t.database.collections.memories.countDocuments({})).toBe(count + 1);
    const successor = await stored(doc.supersededBy!);
    expect(successor).toMatchObject({ text: 'The user owns a Tesla.', version: 1 });
    expect(await versionsOf(old.memoryId)).toEqual([2]);
  });
});

describe('scopes and input', () => {
  async function everything() {
    const db = t.database.collections;
    return {
      memories: await db.memories.find({}).sort({ _id: 1 }).toArray(),
      versions: await db.memoryVersions.find({}).sort({ _id: 1 }).toArray(),
    };
  }

  it('every memory mutation needs the write scope (FORBIDDEN), and a key (401)', async () => {
    const m = await create({ text: 'Guarded memory.' });
    const admin = await t.key(WORKSPACE, ['read', 'admin']);
    const before = await everything();
    const ref = { dataset: DATASET, memoryId: m.memoryId };
    const calls = [
      () => [CurationCreateMemoryDocument, { dataset: DATASET, input: input() }] as const,
      () => [CurationUpdateMemoryDocument, { ...ref, patch: { text: 'x' } }] as const,
      () => [CurationArchiveMemoryDocument, ref] as const,
      () => [CurationUnarchiveMemoryDocument, ref] as const,
      () => [CurationPinMemoryDocument, ref] as const,
      () => [CurationUnpinMemoryDocument, ref] as const,
      () => [CurationSupersedeMemoryDocument, { ...ref, input: input() }] as const,
    ];
    for (const call of calls) {
      const [doc, variables] = call();
      for (const key of [reader, admin]) {
        // biome-ignore lint/suspicious/noExplicitAny: one loop over differently typed operations
        const result = await t.graphql(doc as any, variables, key);
        const error = errorOf(result);
        expect(error.extensions?.code).toBe('FORBIDDEN');
        expect(error.message).toMatch(/the write scope/);
      }
      // biome-ignore lint/suspicious/noExplicitAny: as above
      const anonymous = await t.graphql(doc as any, variables, null);
      expect(anonymous.status).toBe(401);
      expect(errorOf(anonymous).extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect(await everything()).toEqual(before);
  });

  it('bad input is BAD_USER_INPUT naming the field, and writes nothing', async () => {
    const m = await create({ text: 'Validated memory.' });
    const before = await everything();
    const ref = { dataset: DATASET, memoryId: m.memoryId };
    const cases: [string, () => Promise<Result<unknown>>][] = [
      [
        'text',
        () =>
          t.graphql(
            CurationCreateMemoryDocument,
            { dataset: DATASET, input: input({ text: '   ' }) },
            writer,
          ),
      ],
      [
        'importance',
        () =>
          t.graphql(
            CurationCreateMemoryDocument,
            { dataset: DATASET, input: input({ importance: 2 }) },
            writer,
          ),
      ],
      [
        'memoryId',
        () =>
          t.graphql(
            CurationCreateMemoryDocument,
            { dataset: DATASET, input: input({ memoryId: 'not-a-uuid' }) },
            writer,
          ),
      ],
      [
        'memoryId',
        () =>
          t.graphql(
            CurationUpdateMemoryDocument,
            { dataset: DATASET, memoryId: 'not-a-uuid', patch: { text: 'x' } },
            writer,
          ),
      ],
      [
        'expectedVersion',
        () =>
          t.graphql(
            CurationUpdateMemoryDocument,
            { ...ref, expectedVersion: 0, patch: { text: 'x' } },
            writer,
          ),
      ],
      [
        'text',
        () => t.graphql(CurationUpdateMemoryDocument, { ...ref, patch: { text: '' } }, writer),
      ],
      [
        'salience',
        () =>
          t.graphql(CurationUpdateMemoryDocument, { ...ref, patch: { salience: -0.1 } }, writer),
      ],
      [
        'expectedVersion',
        () => t.graphql(CurationArchiveMemoryDocument, { ...ref, expectedVersion: 0 }, writer),
      ],
      [
        'memoryId',
        () => t.graphql(CurationPinMemoryDocument, { ...ref, memoryId: 'nope' }, writer),
      ],
      [
        'importance',
        () =>
          t.graphql(
            CurationSupersedeMemoryDocument,
            { ...ref, input: input({ importance: 2 }) },
            writer,
          ),
      ],
      [
        'dataset',
        () => t.graphql(CurationCreateMemoryDocument, { dataset: '', input: input() }, writer),
      ],
    ];
    for (const [field, run] of cases) {
      const result = await run();
      const error = errorOf(result);
      expect(error.extensions?.code, field).toBe('BAD_USER_INPUT');
      expect(error.message, field).toContain(field);
      expect(result.body.data ?? null).toBeNull();
    }
    expect(await everything()).toEqual(before);
  });
});
