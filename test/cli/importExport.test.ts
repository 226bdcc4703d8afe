import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/store/database.js';
import { exportDocuments } from '../../src/store/exportDocuments.js';
import { findWorkspaceByName, workspaceIdFor } from '../../src/store/workspaces.js';
import { exportLine } from '../../src/transfer/format.js';
import { importJsonl } from '../../src/transfer/importJsonl.js';
import { everyDocument, testServerUri } from '../helpers/database.js';

/**
 * `npm run import` and `npm run export` as a user runs them: child processes (tsx) against
 * the test server through MONGODB_URI, with this file's own databases (MONGODB_DB): `main`,
 * and `restore`, which stays empty until the round trip imports an export into it.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// As the npm scripts run them: one Node process with tsx's loader.
const TSX = ['--import', 'tsx'];
const PREFIX = `test_cli_transfer_${randomBytes(5).toString('hex')}`;
const MAIN_DB = `${PREFIX}_main`;
const RESTORE_DB = `${PREFIX}_restore`;
const DEMO_FILE = join(ROOT, 'src/demo/user_42.jsonl');

const WORKSPACE = 'transfer ws';
const DS1 = 'a/b?c#d%e f ü';
const DS2 = '日本語 🚀 "quoted" \\ back';
const FALLBACK = 'fallback ds';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

let dir: string;
let main: Database;
let restore: Database;

function cli(script: 'import' | 'export', dbName: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...TSX, `src/cli/${script}.ts`, ...args],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 120_000,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...process.env,
          MONGODB_URI: testServerUri(),
          MONGODB_DB: dbName,
          DATA_DIR: dir,
          PORT: '',
          HOST: '',
          LOG_LEVEL: '',
        },
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        // Every command says first which store it opened (checked in keys.test.ts).
        else
          resolve({
            code: error ? (error.code as number) : 0,
            stdout,
            stderr: stderr.replace(/^Store: .*\n/, ''),
          });
      },
    );
  });
}

function writeJsonl(name: string, lines: (string | object)[]): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`,
  );
  return file;
}

const snapshot = (database: Database) => everyDocument(database.db);

/** The documents of the data collections (not `migrations`, which opening the store records). */
async function documentCount(database: Database): Promise<number> {
  const { migrations: _bookkeeping, ...all } = await snapshot(database);
  return Object.values(all).reduce((n, docs) => n + docs.length, 0);
}

const id = (n: number) => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Every field of every kind of line, with nulls, history, and awkward names. */
const RICH_LINES: (string | object)[] = [
  // Entities: with and without updatedAt / entityId, non-ASCII names (stored lower-cased).
  {
    type: 'entity',
    dataset: DS1,
    name: 'Zoë Ünal',
    entityType: 'PERSON',
    entityId: id(1),
    updatedAt: '2026-03-01T10:00:00+01:00',
  },
  { type: 'entity', dataset: DS1, name: '東京', entityType: 'PLACE' },
  {
    type: 'entity',
    dataset: DS2,
    name: 'Ω-Project "X"',
    entityType: 'PRODUCT',
    updatedAt: '2026-05-05',
  },
  { type: 'entity', name: 'Lonely', entityType: 'CONCEPT' },
  // Episodes: an upper-case UUID, a fractional time, empty source / content, escapes.
  {
    type: 'episode',
    dataset: DS1,
    episodeId: id(11).toUpperCase(),
    occurredAt: '2026-03-01T09:59:59.123456Z',
    source: '',
    content: 'line one\nline two\t"quoted" \\ 🚀 ü \u2028 end',
  },
  {
    type: 'episode',
    dataset: DS2,
    episodeId: id(12),
    occurredAt: '2026-06-01',
    source: 'voice',
    content: '',
  },
  // Facts: every field set; superseded + its successor; deleted without recordedAt (and
  // invalidated before it became valid); explicit nulls; defaults; the --dataset fallback.
  {
    type: 'fact',
    dataset: DS1,
    factId: id(21),
    subject: 'Zoë Ünal',
    predicate: 'lives in',
    object: '東京',
    objectIsEntity: true,
    confidence: 1,
    sourceQuote: 'Ich wohne in 東京 — seit März',
    validAt: '2026-03-01',
    validUntil: '2027-03-01T00:00:00Z',
    invalidAt: null,
    episodeId: id(11).toUpperCase(),
    recordedAt: '2026-03-01T10:00:00.5Z',
    invalidReason: null,
    supersededBy: null,
  },
  {
    type: 'fact',
    dataset: DS1,
    factId: id(22),
    subject: 'Zoë Ünal',
    predicate: 'works at',
    object: 'Acme',
    confidence: 0.75,
    validAt: '2025-01-01T00:00:00Z',
    invalidAt: '2026-02-01T00:00:00Z',
    recordedAt: '2025-01-02T00:00:00Z',
    invalidReason: 'superseded',
    supersededBy: id(23),
  },
  {
    type: 'fact',
    dataset: DS1,
    factId: id(23),
    subject: 'Zoë Ünal',
    predicate: 'works at',
    object: 'Globex',
    confidence: 0.9,
    validAt: '2026-02-01T00:00:00Z',
    recordedAt: '2026-02-01T00:00:00Z',
  },
  {
    type: 'fact',
    dataset: DS2,
    factId: id(24),
    subject: 'Ω-Project "X"',
    predicate: 'launches on',
    object: '2027-01-01',
    confidence: 0,
    validAt: '2027-01-01',
    invalidAt: '2026-06-01T12:00:00-05:00',
    invalidReason: 'deleted',
  },
  {
    type: 'fact',
    dataset: DS2,
    factId: id(25),
    subject: 'x',
    predicate: 'has ratio',
    object: 'one third',
    objectIsEntity: false,
    confidence: 0.333333333333,
    sourceQuote: null,
    validAt: '2026-01-01T00:00:00.000Z',
    validUntil: null,
    invalidAt: null,
    episodeId: null,
    invalidReason: null,
    supersededBy: null,
  },
  // A CRLF line and a blank line are fine.
  `${JSON.stringify({
    type: 'fact',
    factId: id(26),
    subject: 'lonely',
    predicate: 'is',
    object: 'alone',
    confidence: 0.5,
    validAt: '2026-01-01',
  })}\r`,
  '',
  // Memories: archived, superseded + its successor, another workspace's workspace_id,
  // omitted nullables, extreme numbers.
  {
    type: 'memory',
    dataset: DS1,
    id: id(31),
    workspace_id: 'some-other-workspace',
    text: 'Zoë lives in 東京.',
    memory_kind: 'fact',
    scope: 'user',
    source_type: 'conversation',
    source_id: id(11),
    project_id: id(41),
    user_id: id(1),
    importance: 0,
    salience: 1,
    pinned: true,
    version: 3,
    archived_at: '2026-04-01T00:00:00Z',
    created_at: '2026-03-01T10:00:00Z',
    updated_at: '2026-03-15T10:00:00.250Z',
    last_used_at: '2026-03-20T08:00:00+02:00',
    valid_from: '2026-03-01T10:00:00Z',
    valid_until: null,
    superseded_by: null,
  },
  {
    type: 'memory',
    dataset: DS1,
    id: id(32),
    text: 'Zoë works at Acme.',
    memory_kind: 'fact',
    scope: 'user',
    source_type: 'conversation',
    importance: 0.5,
    salience: 0.5,
    pinned: false,
    version: 1,
    created_at: '2025-01-02',
    updated_at: '2025-01-02',
    valid_from: '2025-01-02',
    valid_until: '2026-02-01T00:00:00Z',
    superseded_by: id(33),
  },
  {
    type: 'memory',
    dataset: DS1,
    id: id(33),
    workspace_id: workspaceIdFor(WORKSPACE),
    text: 'Zoë works at Globex.',
    memory_kind: 'fact',
    scope: 'user',
    source_type: 'conversation',
    source_id: null,
    project_id: null,
    user_id: null,
    importance: 0.9,
    salience: 0.30000000000000004,
    pinned: false,
    version: 2147483647,
    archived_at: null,
    created_at: '2026-02-01T00:00:00Z',
    updated_at: '2026-02-01T00:00:00Z',
    last_used_at: null,
    valid_from: '2026-02-01T00:00:00Z',
    valid_until: null,
    superseded_by: null,
  },
  {
    type: 'memory',
    dataset: DS2,
    id: id(34),
    text: '',
    memory_kind: 'instruction',
    scope: 'project',
    source_type: 'manual',
    importance: 1e-7,
    salience: 12345.678,
    pinned: false,
    version: 1,
    created_at: '2026-06-01',
    updated_at: '2026-06-01',
    valid_from: '2026-06-01',
  },
  {
    type: 'memory',
    id: id(35),
    text: 'Fallback memory',
    memory_kind: 'note',
    scope: 'user',
    source_type: 'conversation',
    importance: 0.2,
    salience: 0.2,
    pinned: false,
    version: 1,
    created_at: '2026-01-01',
    updated_at: '2026-01-01',
    valid_from: '2026-01-01',
  },
];

let combinedFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'transfer-cli-test-'));
  main = await openDatabase(testServerUri(), MAIN_DB);
  restore = await openDatabase(testServerUri(), RESTORE_DB);
  combinedFile = join(dir, 'combined.jsonl');
  writeFileSync(
    combinedFile,
    readFileSync(DEMO_FILE, 'utf8') +
      RICH_LINES.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') +
      '\n',
  );
});

afterAll(async () => {
  for (const database of [main, restore]) {
    await database?.db.dropDatabase().catch(() => {});
    await database?.close();
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('npm run import: validation', () => {
  it('reports every bad line with its number and reason, and writes nothing at all', async () => {
    expect(await documentCount(main)).toBe(0);
    const fact = {
      type: 'fact',
      dataset: 'd',
      factId: id(901),
      subject: 's',
      predicate: 'p',
      object: 'o',
      confidence: 0.5,
      validAt: '2026-01-01',
    };
    const file = writeJsonl('bad.jsonl', [
      { type: 'entity', dataset: 'd', name: 'fine', entityType: 'PERSON' }, // 1: good
      '{"type": "fact", nope', // 2
      { type: 'gadget', dataset: 'd' }, // 3
      { ...fact, factId: id(902), subject: undefined }, // 4
      { ...fact, factId: id(903), confidence: 2 }, // 5
      { ...fact, factId: id(904), validAt: '2026-02-01', validUntil: '2026-01-01' }, // 6
      { ...fact, factId: 'not-a-uuid' }, // 7
      { ...fact, factId: id(905), dataset: undefined }, // 8
      fact, // 9: good
      { ...fact, factId: id(906), colour: 'red' }, // 10
      { ...fact, factId: id(907), validAt: '2026-02-30' }, // 11
      '', // 12: blank, skipped
      { ...fact, object: 'other' }, // 13: same id as line 9, other content
      fact, // 14: an exact repeat is fine
      { ...fact, factId: id(908), object: 'tea \ud800' }, // 15: a lone surrogate
      { ...fact, factId: id(909), correctionOf: id(901), validUntil: '2026-03-01' }, // 16
      { ...fact, factId: id(910), correctionOf: id(901), correctedBy: id(902) }, // 17
    ]);
    const result = await cli('import', MAIN_DB, file, '--workspace', 'bad ws');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`${file} has 13 bad line(s); nothing was imported.`);
    const reasons = lines.slice(1);
    const expected: [number, RegExp][] = [
      [2, /^line 2: not valid JSON/],
      [3, /^line 3: type: .*'entity' \| 'episode' \| 'fact' \| 'memory'/],
      [4, /^line 4: subject: is required \(a string\)/],
      [5, /^line 5: confidence: must be at most 1$/],
      [6, /^line 6: validUntil: must be after validAt$/],
      [7, /^line 7: factId: expected a UUID$/],
      [8, /^line 8: no dataset: add "dataset" to the line or pass --dataset$/],
      [10, /^line 10: .*colour/],
      [11, /^line 11: validAt: not an ISO 8601 date .*"2026-02-30"/],
      [13, /^line 13: repeats the fact of line 9 with other content$/],
      [15, /^line 15: object: must be valid Unicode text/],
      [16, /^line 16: correctedBy: correctionOf and correctedBy go together/],
      [17, /^line 17: validUntil: a corrected version ends where/],
    ];
    expect(reasons).toHaveLength(expected.length);
    for (const [i, [, pattern]] of expected.entries()) expect(reasons[i]).toMatch(pattern);
    expect(result.stderr).not.toMatch(/^\s+at /m);

    // Nothing was written, not even the workspace or the valid lines.
    expect(await findWorkspaceByName(main.collections, 'bad ws')).toBeNull();
    expect(await documentCount(main)).toBe(0);
  });
});

describe('npm run import / export', () => {
  let firstExport: string;

  it('stores facts as their records derive, and says how many lines stated otherwise', async () => {
    const line = (n: number, object: string, validAt: string) =>
      JSON.stringify({
        type: 'fact',
        dataset: 'rederived',
        factId: id(80 + n),
        subject: 'zoë ünal',
        predicate: 'works at',
        object,
        confidence: 0.9,
        validAt,
        recordedAt: validAt,
        // Neither says it was superseded: the rule of replaceExisting does.
        replaceExisting: true,
      });
    const file = join(dir, 'rederived.jsonl');
    writeFileSync(
      file,
      `${[line(1, 'acme', '2026-01-01T00:00:00Z'), line(2, 'globex', '2026-06-01T00:00:00Z')].join('\n')}\n`,
    );
    const result = await cli('import', 'transfer_rederived', file, '--workspace', WORKSPACE);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('0 new entities, 0 new episodes, 3 new facts');
    expect(result.stdout).toMatch(
      /\nFacts stored as their records derive, not as the file states them: 1 \(.*docs\/IMPORT_EXPORT\.md/,
    );
    // Acme superseded by globex, with its corrected version ending where globex begins.
    const database = await openDatabase(testServerUri(), 'transfer_rederived');
    const db = database.collections;
    try {
      const acme = await db.facts.findOne({ factId: id(81) });
      expect(acme).toMatchObject({ invalidReason: 'superseded', supersededBy: id(82) });
      expect(await db.facts.findOne({ correctionOf: id(81) })).toMatchObject({
        correctedBy: id(82),
        validUntil: new Date('2026-06-01T00:00:00Z'),
        invalidAt: null,
      });
    } finally {
      await database.close();
    }
  });

  it('imports the demo data and a file with every field; "dataset" on a line wins over --dataset', async () => {
    const result = await cli(
      'import',
      MAIN_DB,
      combinedFile,
      '--workspace',
      WORKSPACE,
      '--dataset',
      FALLBACK,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `Imported into workspace "${WORKSPACE}": 9 new entities, 5 new episodes, 14 new facts, 9 new memories (37 records read).\n`,
    );
    const db = main.collections;
    const workspaceId = workspaceIdFor(WORKSPACE);
    // Lines with "dataset" keep it; lines without take --dataset.
    const byDataset = async (collection: 'entities' | 'episodes' | 'facts' | 'memories') => {
      const counts: Record<string, number> = {};
      for (const doc of await db[collection].find({ workspaceId }).toArray()) {
        counts[doc.dataset] = (counts[doc.dataset] ?? 0) + 1;
      }
      return counts;
    };
    expect(await byDataset('entities')).toEqual({ user_42: 5, [DS1]: 2, [DS2]: 1, [FALLBACK]: 1 });
    expect(await byDataset('episodes')).toEqual({ user_42: 3, [DS1]: 1, [DS2]: 1 });
    expect(await byDataset('facts')).toEqual({ user_42: 8, [DS1]: 3, [DS2]: 2, [FALLBACK]: 1 });
    expect(await byDataset('memories')).toEqual({ user_42: 4, [DS1]: 3, [DS2]: 1, [FALLBACK]: 1 });
    const datasets = await db.datasets.find({ workspaceId }).toArray();
    expect(datasets.map((d) => d.name).sort()).toEqual([DS1, DS2, FALLBACK, 'user_42'].sort());
    expect(
      await db.entities.findOne({ workspaceId, dataset: DS1, name: 'zoë ünal' }),
    ).toMatchObject({
      entityId: id(1),
      type: 'PERSON',
      updatedAt: new Date('2026-03-01T09:00:00Z'),
    });
    expect(await db.episodes.findOne({ workspaceId, dataset: DS1 })).toMatchObject({
      episodeId: id(11),
      occurredAt: new Date('2026-03-01T09:59:59.123Z'),
    });
    expect(await db.facts.findOne({ workspaceId, factId: id(24) })).toMatchObject({
      dataset: DS2,
      invalidReason: 'deleted',
      invalidAt: new Date('2026-06-01T17:00:00Z'),
      // No recordedAt and invalidated before it became valid: learned when invalidated.
      recordedAt: new Date('2026-06-01T17:00:00Z'),
    });
    // Invalidated facts are records of what invalidated them, so their history is derived
    // as recording them would (docs/IMPORT_EXPORT.md): the two deletes (one the demo's) and
    // the supersession by a fact that does not replace (said wrong). The demo's Honda,
    // superseded by a replacing Toyota, needs none: the rule derives it.
    expect(
      await db.factRecords.countDocuments({ workspaceId, kind: { $in: ['deleted', 'saidWrong'] } }),
    ).toBe(3);
    // Memory lines' workspace_id is replaced by the target workspace.
    const memories = await db.memories.find({}).toArray();
    expect(memories).toHaveLength(9);
    expect(memories.every((m) => m.workspaceId === workspaceId)).toBe(true);
    // Recall by meaning (EMBEDDINGS=on, the default): every fact and memory stored with its
    // text's vector (docs/RECALL.md).
    const facts = await db.facts.find({ workspaceId }).toArray();
    expect(facts.length).toBeGreaterThan(0);
    for (const doc of [...facts, ...memories]) {
      expect(doc.embedded, doc._id).toBe(true);
      expect(doc.embedding?.toInt8Array()).toHaveLength(384);
    }
  });

  it('importing the same file twice changes nothing', async () => {
    const before = await snapshot(main);
    const result = await cli(
      'import',
      MAIN_DB,
      combinedFile,
      '--workspace',
      WORKSPACE,
      '--dataset',
      FALLBACK,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `Imported into workspace "${WORKSPACE}": 0 new entities, 0 new episodes, 0 new facts, 0 new memories (37 records read).\n`,
    );
    expect(await snapshot(main)).toEqual(before);
  });

  it('export → import into an empty database → export is byte-identical', async () => {
    const exported = await cli('export', MAIN_DB, '--workspace', WORKSPACE);
    expect(exported.code, exported.stderr).toBe(0);
    firstExport = exported.stdout;
    const lines = firstExport.trimEnd().split('\n');
    expect(lines).toHaveLength(37);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    // Every field present, memories carry the workspace's own id.
    for (const l of parsed.filter((p) => p.type === 'memory')) {
      expect(l.workspace_id).toBe(workspaceIdFor(WORKSPACE));
    }
    expect(firstExport).not.toContain('some-other-workspace');
    expect(parsed.find((p) => p.factId === id(23))).toEqual({
      type: 'fact',
      dataset: DS1,
      factId: id(23),
      subject: 'Zoë Ünal',
      predicate: 'works at',
      object: 'Globex',
      objectIsEntity: false,
      confidence: 0.9,
      sourceQuote: null,
      validAt: '2026-02-01T00:00:00.000Z',
      validUntil: null,
      invalidAt: null,
      episodeId: null,
      recordedAt: '2026-02-01T00:00:00.000Z',
      invalidReason: null,
      supersededBy: null,
      replaceExisting: false,
      correctionOf: null,
      correctedBy: null,
    });
    expect(parsed.find((p) => p.name === '東京')).toMatchObject({
      type: 'entity',
      dataset: DS1,
      updatedAt: expect.stringMatching(/Z$/),
    });
    expect(parsed.find((p) => p.id === id(32))).toMatchObject({
      superseded_by: id(33),
      valid_until: '2026-02-01T00:00:00.000Z',
      source_id: null,
      last_used_at: null,
    });

    const file = join(dir, 'export.jsonl');
    writeFileSync(file, firstExport);
    expect(await documentCount(restore)).toBe(0);
    const imported = await cli('import', RESTORE_DB, file, '--workspace', WORKSPACE);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain(
      '9 new entities, 5 new episodes, 14 new facts, 9 new memories',
    );

    const again = await cli('export', RESTORE_DB, '--workspace', WORKSPACE);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(firstExport);
    expect(Buffer.from(again.stdout).equals(Buffer.from(firstExport))).toBe(true);
  });

  it('an export imported into another workspace differs only in workspace_id', async () => {
    const outcome = await importJsonl(restore.collections, {
      now: new Date(),
      workspace: 'another',
      content: firstExport,
    });
    expect(outcome.ok).toBe(true);
    const lines: string[] = [];
    for await (const item of exportDocuments(restore.collections, workspaceIdFor('another'))) {
      lines.push(`${JSON.stringify(exportLine(item))}\n`);
    }
    expect(lines.join('')).toBe(
      firstExport.replaceAll(workspaceIdFor(WORKSPACE), workspaceIdFor('another')),
    );
  });

  it('an export of one dataset holds that dataset only', async () => {
    const lines: string[] = [];
    for await (const item of exportDocuments(main.collections, workspaceIdFor(WORKSPACE), DS1)) {
      lines.push(JSON.stringify(exportLine(item)));
    }
    const expected = firstExport
      .trimEnd()
      .split('\n')
      .filter((l) => (JSON.parse(l) as { dataset: string }).dataset === DS1);
    expect(expected).toHaveLength(9);
    expect(lines).toEqual(expected);
  });
});

describe('import in batches', () => {
  const fact = (n: number) =>
    JSON.stringify({
      type: 'fact',
      factId: `b0000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      subject: `subject ${n}`,
      predicate: 'has number',
      object: String(n),
      confidence: 0.5,
      validAt: '2026-01-01',
    });
  /** Facts number `from` to `to - 1`. */
  const content = (from: number, to: number) =>
    `${Array.from({ length: to - from }, (_, i) => fact(from + i)).join('\n')}\n`;

  it('imports 2,500 facts (three batches of at most 1000) with the right counts', async () => {
    const file = join(dir, 'bulk.jsonl');
    writeFileSync(file, content(0, 2500));
    const result = await cli('import', MAIN_DB, file, '--workspace', 'bulk ws', '--dataset', 'b');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      'Imported into workspace "bulk ws": 0 new entities, 0 new episodes, 2500 new facts, 0 new memories (2500 records read).\n',
    );
    const workspaceId = workspaceIdFor('bulk ws');
    expect(await main.collections.facts.countDocuments({ workspaceId, dataset: 'b' })).toBe(2500);
  });

  it('counts only the new facts when batches partly repeat earlier ones', async () => {
    // The last 500 of the previous test's 2,500 facts again, and 600 new ones: two
    // batches, the first with 500 duplicate keys among 1000.
    const progress: [number, number][] = [];
    const outcome = await importJsonl(main.collections, {
      now: new Date(),
      workspace: 'bulk ws',
      content: content(2000, 3100),
      defaultDataset: 'b',
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(outcome).toMatchObject({
      ok: true,
      records: 1100,
      counts: { entities: 0, episodes: 0, facts: 600, memories: 0 },
    });
    // Reported as the work goes (records in batches, then the histories pair by pair),
    // never backwards, ending at the whole.
    expect(progress.at(-1)).toEqual([1100, 1100]);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]![0]).toBeGreaterThan(progress[i - 1]![0]);
    }
    const workspaceId = workspaceIdFor('bulk ws');
    expect(await main.collections.facts.countDocuments({ workspaceId, dataset: 'b' })).toBe(3100);
    expect(await main.collections.facts.distinct('factId', { workspaceId })).toHaveLength(3100);
  });
});
