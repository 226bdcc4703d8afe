import { beforeAll, describe, expect, it } from 'vitest';
import { eraseEpisode } from '../../src/store/erasure.js';
import { deleteFact } from '../../src/store/factLifecycle.js';
import { recordEpisode } from '../../src/store/recordEpisode.js';
import type { Tenant } from '../../src/store/tenant.js';
import { CorrectedFactsDocument, CorrectedRecallDocument } from '../generated/operations.js';
import { episodeInput, factInput, testTenant } from '../helpers/episodeInput.js';
import { openTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * A value that changed was true until it changed (docs/TEMPORAL_MODEL.md, "One value per
 * subject and predicate"): the example, two episodes with one replacing fact
 * each, "user drives a Honda" from July 1st and "user drives a Toyota" from August 16th,
 * written in both orders. After both writes every view answers the same (mid-July: the
 * Honda; mid-September: the Toyota; now: the Toyota), on every surface; what the store
 * believed before the Toyota arrived does not change.
 */

const HONDA_FROM = '2026-07-01T00:00:00.000Z';
const TOYOTA_FROM = '2026-08-16T00:00:00.000Z';
const MID_JULY = '2026-07-15T00:00:00.000Z';
const MID_SEPTEMBER = '2026-09-15T00:00:00.000Z';
/** The writes: the first at W1, the second at W2 (both after the facts began). */
const W1 = new Date('2026-09-20T10:00:00.000Z');
const W2 = new Date('2026-09-20T11:00:00.000Z');
const BETWEEN = '2026-09-20T10:30:00.000Z';
const AFTER = '2026-09-20T12:00:00.000Z';

let t: TestGateway;
let reader: string;
let writer: string;

beforeAll(async () => {
  t = await openTestGateway({ demoWorkspaces: [] });
  reader = await t.key('acme', ['read']);
  writer = await t.key('acme', ['read', 'write']);
});

const drives = (object: string, validAt: string) =>
  episodeInput(
    [factInput('user', 'drives', object, { validAt: new Date(validAt), replaceExisting: true })],
    { entities: [{ name: 'user', type: 'PERSON' }] },
  );

async function writeBoth(dataset: string, hondaFirst: boolean): Promise<Tenant> {
  const tenant = testTenant('acme', dataset);
  const honda = drives('a honda', HONDA_FROM);
  const toyota = drives('a toyota', TOYOTA_FROM);
  const [first, second] = hondaFirst ? [honda, toyota] : [toyota, honda];
  await recordEpisode(t.database.collections, tenant, first, W1);
  await recordEpisode(t.database.collections, tenant, second, W2);
  return tenant;
}

async function view(dataset: string, variables: Record<string, unknown>) {
  const { body } = await t.graphql(CorrectedFactsDocument, { dataset, ...variables }, reader);
  expect(body.errors).toBeUndefined();
  const ds = body.data!.dataset!;
  const facts = ds.facts.edges.map((e) => e.node);
  return {
    facts,
    objects: facts.map((f) => f.object).sort(),
    entityObjects: ds.entity!.facts.map((f) => f.object).sort(),
  };
}

async function recalled(dataset: string, variables: Record<string, unknown>) {
  const { body } = await t.graphql(
    CorrectedRecallDocument,
    { dataset, query: 'what does the user drive', ...variables },
    reader,
  );
  expect(body.errors).toBeUndefined();
  return body.data!.dataset!.recall.facts.map((f) => f.fact.object).sort();
}

describe.each([
  ['Honda first', true],
  ['Toyota first (the Honda arrives late)', false],
])('written %s', (name, hondaFirst) => {
  const dataset = `cars ${name}`;
  beforeAll(async () => {
    await writeBoth(dataset, hondaFirst);
  });

  it('as known now: mid-July the Honda, mid-September and now the Toyota', async () => {
    for (const validAt of [MID_JULY, MID_SEPTEMBER, undefined]) {
      const { objects, entityObjects } = await view(dataset, { validAt });
      const expected = validAt === MID_JULY ? ['a honda'] : ['a toyota'];
      expect(objects, validAt).toEqual(expected);
      expect(entityObjects, validAt).toEqual(expected);
      expect(await recalled(dataset, { validAt }), validAt).toEqual(expected);
    }
    const july = (await view(dataset, { validAt: MID_JULY })).facts[0]!;
    // True from its validAt until the Toyota began; LIVE in mid-July, as known now.
    expect(july).toMatchObject({ validAt: HONDA_FROM, validUntil: TOYOTA_FROM, invalidAt: null });
    expect(
      (await view(dataset, { validAt: MID_JULY, stateValidAt: MID_JULY })).facts[0]!.state,
    ).toBe('LIVE');
  });

  it('as known after both writes, at any instant, the same', async () => {
    expect((await view(dataset, { validAt: MID_JULY, knownAt: AFTER })).objects).toEqual([
      'a honda',
    ]);
    expect((await view(dataset, { validAt: MID_SEPTEMBER, knownAt: AFTER })).objects).toEqual([
      'a toyota',
    ]);
  });

  it('what was believed before the second write is unchanged', async () => {
    const before = await view(dataset, { asOf: BETWEEN });
    const mid = await view(dataset, { validAt: MID_JULY, knownAt: BETWEEN });
    if (hondaFirst) {
      // Only the Honda was known, open-ended and believed.
      expect(before.objects).toEqual(['a honda']);
      expect(before.facts[0]).toMatchObject({ validUntil: null });
      expect(mid.objects).toEqual(['a honda']);
      expect(await recalled(dataset, { validAt: MID_JULY, knownAt: BETWEEN })).toEqual(['a honda']);
    } else {
      // Only the Toyota was known: nothing in July.
      expect(before.objects).toEqual(['a toyota']);
      expect(mid.objects).toEqual([]);
    }
  });

  it('the full history: the superseded Honda and its corrected version, or the Honda bounded on arrival', async () => {
    const { facts } = await view(dataset, { includeInvalidated: true });
    const hondas = facts.filter((f) => f.object === 'a honda');
    if (hondaFirst) {
      const [superseded, version] = [
        hondas.find((f) => f.invalidAt !== null)!,
        hondas.find((f) => f.invalidAt === null)!,
      ];
      const toyota = facts.find((f) => f.object === 'a toyota')!;
      expect(superseded).toMatchObject({
        validUntil: null,
        supersededBy: { factId: toyota.factId },
      });
      expect(version).toMatchObject({
        validUntil: TOYOTA_FROM,
        recordedAt: superseded.invalidAt,
        correctionOf: { factId: superseded.factId },
        correctedBy: { factId: toyota.factId },
      });
    } else {
      expect(hondas).toHaveLength(1);
      expect(hondas[0]).toMatchObject({
        validUntil: TOYOTA_FROM,
        invalidAt: null,
        correctionOf: null,
      });
    }
  });
});

describe('the Memory Soda routes keep their documented meaning', () => {
  const dataset = 'cars memory soda';
  const list = async (query = '') => {
    const response = await t.request(
      `/v1/memory/semantic/datasets/${encodeURIComponent(dataset)}/facts${query}`,
      { key: reader },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      facts: { object: string; validUntil: string | null; invalidAt: string | null }[];
    };
    return body.facts;
  };
  beforeAll(async () => {
    await writeBoth(dataset, true);
  });

  it('the live list: the Toyota only (the Honda superseded, its version expired)', async () => {
    expect((await list()).map((f) => f.object)).toEqual(['a toyota']);
  });

  it('includeInvalidated: the Honda superseded by the Toyota, and its version, expired, ending where the Toyota begins', async () => {
    const facts = await list('?includeInvalidated=true');
    // The document's fact: no supersededBy; invalidAt tells the superseded Honda, and the
    // version's validUntil (past) says it has expired.
    expect(facts.map((f) => [f.object, f.validUntil, f.invalidAt !== null]).sort()).toEqual([
      ['a honda', null, true],
      ['a honda', TOYOTA_FROM, false],
      ['a toyota', null, false],
    ]);
  });

  it('asOf before the Toyota: the Honda, as it was believed', async () => {
    expect((await list(`?asOf=${BETWEEN}`)).map((f) => [f.object, f.validUntil])).toEqual([
      ['a honda', null],
    ]);
  });
});

describe('a successor still to come', () => {
  it('keeps the old value live until it begins', async () => {
    const tenant = testTenant('acme', 'future successor');
    const now = Date.now();
    await recordEpisode(
      t.database.collections,
      tenant,
      drives('a honda', new Date(now - 86_400_000).toISOString()),
      new Date(now),
    );
    const from = new Date(now + 30 * 86_400_000).toISOString();
    await recordEpisode(
      t.database.collections,
      tenant,
      drives('a toyota', from),
      new Date(now + 1),
    );
    const live = await view('future successor', {});
    expect(live.facts.map((f) => [f.object, f.validUntil])).toEqual([['a honda', from]]);
  });
});

describe('said wrong after its version was recorded', () => {
  it('an explicit supersedes ends every version of the fact', async () => {
    const tenant = testTenant('acme', 'listed after');
    const db = t.database.collections;
    const honda = await recordEpisode(db, tenant, drives('a honda', HONDA_FROM), W1);
    await recordEpisode(db, tenant, drives('a toyota', TOYOTA_FROM), W2);
    expect((await view('listed after', { validAt: MID_JULY })).objects).toEqual(['a honda']);
    await recordEpisode(
      db,
      tenant,
      episodeInput([
        factInput('user', 'drives', 'a bicycle', {
          validAt: new Date(HONDA_FROM),
          supersedes: [honda.facts[0]!.factId],
        }),
      ]),
      new Date(AFTER),
    );
    expect((await view('listed after', { validAt: MID_JULY })).objects).toEqual(['a bicycle']);
  });

  it('a deleted version is gone from the corrected history; the Toyota still begins where it did', async () => {
    const tenant = testTenant('acme', 'deleted version');
    const db = t.database.collections;
    await writeBoth('deleted version', true);
    const version = (await view('deleted version', { validAt: MID_JULY })).facts[0]!;
    await deleteFact(db, tenant, version.factId, new Date(AFTER));
    expect((await view('deleted version', { validAt: MID_JULY })).objects).toEqual([]);
    expect((await view('deleted version', { validAt: MID_SEPTEMBER })).objects).toEqual([
      'a toyota',
    ]);
  });
});

describe('a delete says the fact was wrong, whatever the order', () => {
  const deleteFact = async (dataset: string, factId: string) => {
    const response = await t.request(
      `/v1/memory/semantic/datasets/${encodeURIComponent(dataset)}/facts/${factId}`,
      { method: 'DELETE', key: writer },
    );
    return [response.status, await response.json()];
  };

  it('deleted after the Toyota arrived: its corrected version goes too, once', async () => {
    const tenant = await writeBoth('deleted after', true);
    const honda = (await view('deleted after', { includeInvalidated: true })).facts.find(
      (f) => f.object === 'a honda' && f.invalidAt !== null,
    )!;
    expect(await deleteFact('deleted after', honda.factId)).toEqual([
      200,
      { factId: honda.factId, deleted: true },
    ]);
    expect((await view('deleted after', { validAt: MID_JULY })).objects).toEqual([]);
    expect((await view('deleted after', { validAt: MID_SEPTEMBER })).objects).toEqual(['a toyota']);
    // Nothing of it is believed any more: a second delete is refused, as documented.
    expect(await deleteFact('deleted after', honda.factId)).toEqual([
      404,
      { error: 'Fact not found' },
    ]);
    expect(tenant.dataset).toBe('deleted after');
  });

  it('deleted before the Toyota arrived: the same views', async () => {
    const tenant = testTenant('acme', 'deleted before');
    const db = t.database.collections;
    const honda = await recordEpisode(db, tenant, drives('a honda', HONDA_FROM), W1);
    expect(await deleteFact('deleted before', honda.facts[0]!.factId)).toEqual([
      200,
      { factId: honda.facts[0]!.factId, deleted: true },
    ]);
    await recordEpisode(db, tenant, drives('a toyota', TOYOTA_FROM), W2);
    expect((await view('deleted before', { validAt: MID_JULY })).objects).toEqual([]);
    expect((await view('deleted before', { validAt: MID_SEPTEMBER })).objects).toEqual([
      'a toyota',
    ]);
  });
});

describe('erasing the episode of the successor', () => {
  it('removes the versions it ended and those that followed, restores the fact, and the rest of the history settles it', async () => {
    const tenant = testTenant('acme', 'erased successor');
    const db = t.database.collections;
    await recordEpisode(db, tenant, drives('a honda', HONDA_FROM), W1);
    const toyota = await recordEpisode(db, tenant, drives('a toyota', TOYOTA_FROM), W2);
    // A VW from August 1st arrives late: the Honda's version ends there now.
    await recordEpisode(db, tenant, drives('a vw', '2026-08-01T00:00:00.000Z'), new Date(AFTER));
    expect((await view('erased successor', { validAt: MID_JULY })).facts[0]).toMatchObject({
      object: 'a honda',
      validUntil: '2026-08-01T00:00:00.000Z',
    });
    await eraseEpisode(
      db,
      tenant,
      toyota.episode.episodeId,
      { keyId: 'test' },
      new Date('2026-09-21T00:00:00.000Z'),
    );
    const history = (await view('erased successor', { includeInvalidated: true })).facts;
    expect(history.some((f) => f.object === 'a toyota')).toBe(false);
    // Nothing the Toyota ended is left: the Honda was restored, then the VW superseded it,
    // with a version ending where the VW begins.
    expect(history.some((f) => f.correctedBy?.factId === toyota.facts[0]!.factId)).toBe(false);
    expect(
      (await view('erased successor', { validAt: MID_JULY })).facts.map((f) => [
        f.object,
        f.validUntil,
      ]),
    ).toEqual([['a honda', '2026-08-01T00:00:00.000Z']]);
    expect(history.filter((f) => f.object === 'a honda' && f.invalidAt === null)).toHaveLength(1);
  });
});
