import { describe, expect, it } from 'vitest';
import type { Collections } from '../../src/store/collections.js';
import { exportDocuments } from '../../src/store/exportDocuments.js';
import { createMemory } from '../../src/store/memoryWrites.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import { exportLine, parseImportFile } from '../../src/transfer/format.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { openTestDatabase } from '../helpers/database.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';

/**
 * Every write path builds a kind's document with the store's one builder
 * (store/documents.ts). If the paths drifted (a derived field computed another way, an id
 * left in upper case), an export imported again would carry other values than what the
 * recording wrote, and a re-import would stop being idempotent. So: record, export, parse
 * the export as an import would, and compare document to document, field by field.
 */

const WORKSPACE = 'same-documents';
const tenant = testTenant(WORKSPACE, 'user_7');
const AT = new Date('2026-11-02T10:00:00.000Z');

async function recordSample(db: Collections): Promise<void> {
  const first = await recordEpisode(
    db,
    tenant,
    episodeInput(
      [
        // Mixed case, accents and punctuation: every derived field has work to do.
        factInput('Zoë Müller', 'Drives', 'Blue Škoda Octavia', {
          objectIsEntity: true,
          sourceQuote: 'I drive a blue Škoda',
          validUntil: new Date('2027-01-01T00:00:00.000Z'),
        }),
        factInput('Zoë Müller', 'LIKES', 'crème brûlée, not flan'),
      ],
      {
        episodeId: 'A1B2C3D4-0000-4000-8000-00000000000A',
        entities: [
          { name: 'Zoë Müller', type: 'PERSON' },
          { name: 'Blue Škoda Octavia', type: 'PRODUCT' },
        ],
      },
    ),
    AT,
  );
  // A second episode supersedes the first fact: the export carries an invalidated fact.
  await recordEpisode(
    db,
    tenant,
    episodeInput(
      [
        factInput('zoë müller', 'drives', 'a bicycle', {
          supersedes: [first.facts[0]!.factId.toUpperCase()],
        }),
      ],
      { episodeId: 'A1B2C3D4-0000-4000-8000-00000000000B' },
    ),
    new Date(AT.getTime() + 60_000),
  );
  await createMemory(
    db,
    tenant,
    {
      memoryId: 'A1B2C3D4-0000-4000-8000-00000000000C',
      text: 'Prefers window seats',
      memoryKind: 'preference',
      scope: 'user',
      sourceType: 'conversation',
      sourceId: 'A1B2C3D4-0000-4000-8000-00000000000D',
      projectId: null,
      userId: 'A1B2C3D4-0000-4000-8000-00000000000E',
      importance: 0.7,
      salience: 0.4,
      pinned: true,
      validFrom: null,
    },
    AT,
  );
}

async function exportedFile(db: Collections): Promise<string> {
  const lines: string[] = [];
  for await (const item of exportDocuments(db, tenant.workspaceId)) {
    lines.push(JSON.stringify(exportLine(item)));
  }
  return `${lines.join('\n')}\n`;
}

/** The stored documents of the workspace, by `_id`, per kind. */
async function storedDocuments(db: Collections) {
  const filter = { workspaceId: tenant.workspaceId };
  const byId = <T extends { _id: string }>(docs: T[]) => new Map(docs.map((d) => [d._id, d]));
  return {
    entity: byId(await db.entities.find(filter).toArray()),
    episode: byId(await db.episodes.find(filter).toArray()),
    fact: byId(await db.facts.find(filter).toArray()),
    memory: byId(await db.memories.find(filter).toArray()),
  };
}

describe('one builder per stored document kind', () => {
  it('an exported document parses, as an import, into the document the recording stored', async () => {
    const { collections: db } = await openTestDatabase();
    await recordSample(db);
    const stored = await storedDocuments(db);
    const file = await exportedFile(db);

    const parsed = parseImportFile(file, { workspaceId: tenant.workspaceId, now: new Date() });
    if (!parsed.ok) throw new Error(`the export does not import: ${JSON.stringify(parsed.errors)}`);
    const seen = { entity: 0, episode: 0, fact: 0, memory: 0 };
    for (const record of parsed.records) {
      seen[record.kind]++;
      const original = stored[record.kind].get(record.doc._id);
      expect(
        original,
        `${record.kind} ${record.doc._id} is stored under the same _id`,
      ).toBeDefined();
      const imported: Record<string, unknown> = { ...record.doc };
      const recorded: Record<string, unknown> = { ...original };
      // The format does not carry when an episode was recorded: an import records it anew.
      if (record.kind === 'episode') {
        delete imported.recordedAt;
        delete recorded.recordedAt;
      }
      expect(Object.keys(imported).sort(), `${record.kind}'s fields`).toEqual(
        Object.keys(recorded).sort(),
      );
      for (const field of Object.keys(recorded)) {
        expect(imported[field], `${record.kind}.${field}`).toEqual(recorded[field]);
      }
    }
    // Nothing to compare would prove nothing: every kind, every stored document.
    expect(seen).toEqual({
      entity: stored.entity.size,
      episode: stored.episode.size,
      fact: stored.fact.size,
      memory: stored.memory.size,
    });
    expect(seen).toEqual({ entity: 2, episode: 2, fact: 3, memory: 1 });
    const facts = [...stored.fact.values()];
    expect(facts.filter((f) => f.invalidReason === 'superseded')).toHaveLength(1);
    expect(facts.find((f) => f.subject === 'Zoë Müller' && f.predicate === 'Drives')).toMatchObject(
      {
        subjectKey: 'zoë müller',
        objectKey: 'blue škoda octavia',
        predicateKey: 'drives',
        recallTerms: ['zoë', 'müller', 'drive', 'blue', 'škoda', 'octavia'],
        episodeId: 'a1b2c3d4-0000-4000-8000-00000000000a',
      },
    );
  });

  it('importing the export into the store that recorded it writes nothing and changes nothing', async () => {
    const { collections: db } = await openTestDatabase();
    await recordSample(db);
    const before = await storedDocuments(db);
    const records = await db.factRecords.find({}).sort({ _id: 1 }).toArray();
    const outcome = await importJsonl(db, {
      workspace: WORKSPACE,
      content: await exportedFile(db),
      now: new Date(AT.getTime() + 3_600_000),
    });
    expect(outcome.ok && outcome.counts).toEqual({
      entities: 0,
      episodes: 0,
      facts: 0,
      memories: 0,
    });
    expect(await storedDocuments(db)).toEqual(before);
    expect(await db.factRecords.find({}).sort({ _id: 1 }).toArray()).toEqual(records);
  });
});
