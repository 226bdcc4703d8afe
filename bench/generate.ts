import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCommandLine } from '../src/cli/help.js';
import type { Collections } from '../src/store/collections.js';
import { type ImportOutcome, importJsonl } from '../src/transfer/importJsonl.js';

/**
 * A benchmark dataset of a chosen size, as JSONL in the import format
 * (src/transfer/format.ts), written through the import path (`importJsonl`), so the
 * documents are exactly what `npm run import` would store.
 *
 * Facts are spread over entities (skewed: a hub entity `user` and a few popular ones
 * carry many facts, most carry few) and episodes, with every bi-temporal state present:
 * live (some with a validUntil far ahead), superseded (by a later fact on the same
 * subject and predicate), soft-deleted, expired (validUntil in the past) and future
 * (validAt a year or more ahead, already recorded). Memories span two datasets of the
 * workspace, including archived, superseded (validity ended, with a successor) and
 * ending-in-the-future ones. Every instant is relative to `now` (default: today 00:00Z)
 * and kept at least a day away from it, so a run never sees a fact change state.
 *
 * Deterministic for a given seed, sizes and `now`.
 *
 * As a command, writes the JSONL (load it with `npm run import -- FILE --workspace NAME`):
 *   node --import tsx bench/generate.ts [--size quick|full] [--facts N] [--entities N]
 *     [--episodes N] [--memories N] [--dataset NAME] [--seed N] [--out file.jsonl]
 */

export interface DatasetSize {
  /** Facts over both datasets (80 % in the main one). */
  facts: number;
  /** Entities of the main dataset (the second dataset has a fifth as many). */
  entities: number;
  episodes: number;
  /** Memories over both datasets. */
  memories: number;
}

/**
 * FerretDB 1.x on SQLite reads and decodes every document of a collection for any filter
 * but `_id` equality (a few tenths of a millisecond per fact on a small machine), so
 * these sizes keep the bench's runs within their time budget there (quick: under two
 * minutes); against a real MongoDB pass larger ones (`--facts`).
 */
export const SIZES = {
  quick: { facts: 200, entities: 60, episodes: 30, memories: 100 },
  full: { facts: 1_500, entities: 250, episodes: 150, memories: 400 },
} as const satisfies Record<string, DatasetSize>;

export interface GenerateOptions extends DatasetSize {
  /** The main dataset; a second one, `<dataset>_other`, gets a fifth of the facts. */
  dataset: string;
  seed?: number;
  now?: Date;
}

/** Parameters the bench derives from the generated data, so its questions hit real rows. */
export interface Probes {
  dataset: string;
  /** A two-word `q` that matches a moderate share of the facts. */
  q: string;
  /** An instant in the middle of the facts' history, for `asOf`. */
  asOf: string;
  /** An episode of the main dataset that produced facts. */
  episodeId: string;
  /** The entity with the most facts (the hub), a mid-sized one, and a small one. */
  hubEntity: string;
  mediumEntity: string;
  smallEntity: string;
}

export interface GeneratedDataset {
  lines: string[];
  counts: {
    entities: number;
    episodes: number;
    memories: number;
    facts: number;
    factStates: Record<'live' | 'superseded' | 'deleted' | 'expired' | 'future', number>;
    memoryStates: Record<'live' | 'archived' | 'superseded' | 'endingLater', number>;
  };
  probes: Probes;
}

const DAY = 86_400_000;

/** mulberry32: a small, fast, seeded PRNG (uniform in [0, 1)); the tests' random histories use it too. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A UUID-shaped id from (seed, kind, n): stable across runs, distinct per input. */
function uuid(seed: number, kind: string, n: number): string {
  const hex = createHash('sha1').update(`${seed}:${kind}:${n}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const ENTITY_KINDS: { type: string; words: string[] }[] = [
  { type: 'PERSON', words: ['alice', 'bruno', 'chiara', 'dmitri', 'emeka', 'farah', 'goran'] },
  { type: 'ORG', words: ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'vandelay'] },
  { type: 'PLACE', words: ['berlin', 'lisbon', 'osaka', 'nairobi', 'quito', 'tallinn'] },
  { type: 'PRODUCT', words: ['civic', 'corolla', 'kindle', 'thinkpad', 'vespa', 'walkman'] },
  { type: 'SKILL', words: ['python', 'welding', 'pottery', 'salsa', 'sailing', 'chess'] },
  { type: 'TOPIC', words: ['jazz', 'astronomy', 'gardening', 'climbing', 'poetry', 'rust'] },
  { type: 'FOOD', words: ['ramen', 'injera', 'pierogi', 'ceviche', 'falafel', 'paella'] },
];

/** Predicates, weighted: "works at" is the `q` probe, about 8 % of the facts. */
const PREDICATES: [string, number][] = [
  ['likes', 14],
  ['is interested in', 12],
  ['knows', 10],
  ['visited', 9],
  ['works at', 8],
  ['lives in', 7],
  ['owns', 7],
  ['prefers', 7],
  ['studies', 6],
  ['plans to visit', 6],
  ['bought', 6],
  ['is allergic to', 4],
  ['mentioned', 4],
];

const LITERALS = [
  'spicy food',
  'early mornings',
  'a quiet flat',
  'long walks',
  'black coffee',
  'a budget of 20000 euros',
  'three cats',
  'night trains',
  'vinyl records',
  'remote work',
];

const SOURCES = ['chat', 'email', 'voice', 'import'];
const MEMORY_KINDS = ['fact', 'preference', 'instruction', 'event'];
const SCOPES = ['user', 'project', 'global'];

function weighted<T>(random: () => number, items: [T, number][]): T {
  const total = items.reduce((s, [, w]) => s + w, 0);
  let x = random() * total;
  for (const [item, w] of items) {
    x -= w;
    if (x < 0) return item;
  }
  return items.at(-1)![0];
}

const iso = (ms: number) => new Date(ms).toISOString();

export function generateDataset(options: GenerateOptions): GeneratedDataset {
  const seed = options.seed ?? 42;
  const random = prng(seed);
  const now = options.now
    ? options.now.getTime()
    : Math.floor(Date.now() / DAY) * DAY; /* today 00:00Z */
  const past = (minDays: number, maxDays: number) =>
    now - Math.round((minDays + random() * (maxDays - minDays)) * DAY);
  const ahead = (minDays: number, maxDays: number) =>
    now + Math.round((minDays + random() * (maxDays - minDays)) * DAY);

  const datasets = [options.dataset, `${options.dataset}_other`];
  const lines: string[] = [];
  const factStates = { live: 0, superseded: 0, deleted: 0, expired: 0, future: 0 };
  const memoryStates = { live: 0, archived: 0, superseded: 0, endingLater: 0 };

  // Entities per dataset: `user` (the hub) first, then names from the word pools.
  const entityNames = datasets.map((_, d) => {
    const count = Math.max(2, d === 0 ? options.entities : Math.ceil(options.entities / 5));
    const names: { name: string; type: string }[] = [{ name: 'user', type: 'PERSON' }];
    for (let i = 1; i < count; i++) {
      const kind = ENTITY_KINDS[i % ENTITY_KINDS.length]!;
      const word = kind.words[Math.floor(i / ENTITY_KINDS.length) % kind.words.length]!;
      names.push({ name: `${word} ${i}`, type: kind.type });
    }
    return names;
  });
  /** Skewed pick: low indices are far more popular (the hub is index 0). */
  const pickEntity = (d: number, hubShare: number) => {
    const names = entityNames[d]!;
    if (random() < hubShare) return names[0]!.name;
    return names[1 + Math.floor((names.length - 1) * random() ** 2.5)]!.name;
  };

  // Episodes per dataset, in time order over the last 540 days.
  const episodes = datasets.map((ds, d) => {
    const count = Math.max(1, Math.round(options.episodes * (d === 0 ? 0.8 : 0.2)));
    const list: { episodeId: string; occurredAt: number }[] = [];
    for (let i = 0; i < count; i++) {
      const occurredAt = now - Math.round((540 - (530 * i) / count) * DAY);
      const episodeId = uuid(seed, `episode:${ds}`, i);
      list.push({ episodeId, occurredAt });
      lines.push(
        JSON.stringify({
          type: 'episode',
          dataset: ds,
          episodeId,
          occurredAt: iso(occurredAt),
          source: SOURCES[i % SOURCES.length],
          content: `user: turn ${i} of the conversation, mentioning a few things worth remembering`,
        }),
      );
    }
    return list;
  });

  // Facts. Each is produced by an episode (90 %) at the episode's time; its state is
  // drawn, and a superseded fact comes with its successor on the same subject/predicate.
  const mentions = datasets.map(() => new Map<string, number>());
  const mention = (d: number, name: string, at: number) => {
    const m = mentions[d]!;
    m.set(name, Math.max(m.get(name) ?? 0, at));
  };
  const factCount = (d: number) => Math.round(options.facts * (d === 0 ? 0.8 : 0.2));
  let n = 0;
  for (let d = 0; d < datasets.length; d++) {
    const ds = datasets[d]!;
    const target = factCount(d);
    const eps = episodes[d]!;
    for (let i = 0; i < target; ) {
      const ep = eps[Math.floor((i / target) * eps.length)]!;
      const subject = pickEntity(d, 0.15);
      const predicate = weighted(random, PREDICATES);
      const objectIsEntity = random() < 0.6;
      let object = objectIsEntity
        ? pickEntity(d, 0.02)
        : LITERALS[Math.floor(random() * LITERALS.length)]!;
      if (object === subject) object = LITERALS[0]!;
      const base = {
        type: 'fact',
        dataset: ds,
        subject,
        predicate,
        object,
        objectIsEntity: objectIsEntity && object !== LITERALS[0],
        confidence: Math.round((0.5 + random() * 0.5) * 100) / 100,
        sourceQuote: random() < 0.5 ? `I mentioned that ${subject} ${predicate} ${object}` : null,
        episodeId: random() < 0.9 ? ep.episodeId : null,
      };
      const roll = random();
      const validAt = Math.min(ep.occurredAt, now - 2 * DAY);
      const emit = (fields: Record<string, unknown>) => {
        lines.push(JSON.stringify({ ...base, factId: uuid(seed, 'fact', n++), ...fields }));
        i++;
      };
      if (roll < 0.1 && i + 1 < target) {
        // Superseded by a later fact with the same subject and predicate.
        const successorId = uuid(seed, 'fact', n + 1);
        const later = Math.min(validAt + Math.round((1 + random() * 60) * DAY), now - DAY);
        emit({
          validAt: iso(validAt),
          validUntil: null,
          recordedAt: iso(validAt),
          invalidAt: iso(later),
          invalidReason: 'superseded',
          supersededBy: successorId,
        });
        let next = base.objectIsEntity ? pickEntity(d, 0) : LITERALS[(i * 7) % LITERALS.length]!;
        if (next === subject) next = entityNames[d]![1]!.name;
        if (base.objectIsEntity) mention(d, next, later);
        lines.push(
          JSON.stringify({
            ...base,
            object: next,
            factId: successorId,
            validAt: iso(later),
            validUntil: null,
            recordedAt: iso(later),
            invalidAt: null,
          }),
        );
        n++;
        i++;
        factStates.superseded++;
        factStates.live++;
        mention(d, subject, later);
      } else if (roll < 0.15) {
        // Soft-deleted some time after it was recorded.
        const deletedAt = Math.min(validAt + Math.round((1 + random() * 90) * DAY), now - DAY);
        emit({
          validAt: iso(validAt),
          validUntil: null,
          recordedAt: iso(validAt),
          invalidAt: iso(deletedAt),
          invalidReason: 'deleted',
        });
        factStates.deleted++;
      } else if (roll < 0.23 && validAt < now - 3 * DAY) {
        // Expired: its validity ended in the past.
        const until = validAt + Math.round(random() * (now - DAY - validAt));
        emit({
          validAt: iso(validAt),
          validUntil: iso(Math.max(until, validAt + DAY)),
          recordedAt: iso(validAt),
          invalidAt: null,
        });
        factStates.expired++;
      } else if (roll < 0.28) {
        // Future: recorded now-ish, valid from a year or more ahead.
        emit({
          validAt: iso(ahead(365, 730)),
          validUntil: null,
          recordedAt: iso(validAt),
          invalidAt: null,
        });
        factStates.future++;
      } else {
        // Live; a few with a validUntil far ahead.
        emit({
          validAt: iso(validAt),
          validUntil: random() < 0.1 ? iso(ahead(400, 900)) : null,
          recordedAt: iso(validAt),
          invalidAt: null,
        });
        factStates.live++;
      }
      mention(d, subject, validAt);
      if (base.objectIsEntity) mention(d, object, validAt);
    }
  }

  // Entities, with updatedAt = their latest mention (or long ago when never mentioned).
  for (let d = 0; d < datasets.length; d++) {
    for (const { name, type } of entityNames[d]!) {
      lines.push(
        JSON.stringify({
          type: 'entity',
          dataset: datasets[d],
          name,
          entityType: type,
          updatedAt: iso(mentions[d]!.get(name) ?? now - 600 * DAY),
        }),
      );
    }
  }

  // Memories over both datasets: live, archived, superseded (with a successor), and
  // live ones whose validity ends a year or more ahead.
  for (let i = 0; i < options.memories; ) {
    const ds = datasets[i % 5 === 4 ? 1 : 0]!;
    const createdAt = past(2, 500);
    const roll = random();
    const memory = (id: string, fields: Record<string, unknown>) => {
      lines.push(
        JSON.stringify({
          type: 'memory',
          dataset: ds,
          id,
          text: `Memory ${i}: the user ${weighted(random, PREDICATES)} ${pickEntity(0, 0)}; noted for later conversations.`,
          memory_kind: MEMORY_KINDS[i % MEMORY_KINDS.length],
          scope: SCOPES[i % SCOPES.length],
          source_type: 'conversation',
          source_id: random() < 0.5 ? uuid(seed, 'source', i) : null,
          project_id: i % 3 === 1 ? uuid(seed, 'project', i % 7) : null,
          user_id: uuid(seed, 'user', 0),
          importance: Math.round(random() * 100) / 100,
          salience: Math.round(random() * 100) / 100,
          pinned: random() < 0.1,
          version: 1,
          archived_at: null,
          created_at: iso(createdAt),
          updated_at: iso(createdAt),
          last_used_at: random() < 0.5 ? iso(Math.min(createdAt + DAY, now - DAY)) : null,
          valid_from: iso(createdAt),
          valid_until: null,
          superseded_by: null,
          ...fields,
        }),
      );
      i++;
    };
    if (roll < 0.1 && i + 1 < options.memories) {
      const successor = uuid(seed, 'memory', i + 1);
      const replacedAt = Math.min(createdAt + Math.round((1 + random() * 30) * DAY), now - DAY);
      memory(uuid(seed, 'memory', i), {
        version: 2,
        updated_at: iso(replacedAt),
        valid_until: iso(replacedAt),
        superseded_by: successor,
      });
      memory(successor, {
        created_at: iso(replacedAt),
        updated_at: iso(replacedAt),
        valid_from: iso(replacedAt),
      });
      memoryStates.superseded++;
      memoryStates.live++;
    } else if (roll < 0.2) {
      const archivedAt = Math.min(createdAt + Math.round((1 + random() * 30) * DAY), now - DAY);
      memory(uuid(seed, 'memory', i), {
        archived_at: iso(archivedAt),
        updated_at: iso(archivedAt),
      });
      memoryStates.archived++;
    } else if (roll < 0.25) {
      memory(uuid(seed, 'memory', i), { valid_until: iso(ahead(365, 700)) });
      memoryStates.endingLater++;
    } else {
      memory(uuid(seed, 'memory', i), {});
      memoryStates.live++;
    }
  }

  // Probes on the main dataset: entities ranked by how many facts mention them.
  const factsPerEntity = new Map<string, number>();
  for (const line of lines) {
    if (!line.startsWith('{"type":"fact"')) continue;
    const f = JSON.parse(line) as { dataset: string; subject: string; object: string };
    if (f.dataset !== datasets[0]) continue;
    for (const name of new Set([f.subject, f.object])) {
      factsPerEntity.set(name, (factsPerEntity.get(name) ?? 0) + 1);
    }
  }
  const ranked = entityNames[0]!
    .map((e) => e.name)
    .filter((name) => factsPerEntity.has(name))
    .sort((a, b) => factsPerEntity.get(b)! - factsPerEntity.get(a)! || a.localeCompare(b));
  const probes: Probes = {
    dataset: datasets[0]!,
    q: 'works at',
    asOf: iso(now - 180 * DAY),
    episodeId: episodes[0]![Math.floor(episodes[0]!.length / 2)]!.episodeId,
    hubEntity: ranked[0] ?? 'user',
    mediumEntity: ranked[Math.min(ranked.length - 1, 5)] ?? 'user',
    smallEntity: ranked.at(-1) ?? 'user',
  };

  return {
    lines,
    counts: {
      entities: entityNames.reduce((s, e) => s + e.length, 0),
      episodes: episodes.reduce((s, e) => s + e.length, 0),
      memories: options.memories,
      facts: n,
      factStates,
      memoryStates,
    },
    probes,
  };
}

/** Generates the dataset and writes it into `workspace` through the import path. */
export async function seedDataset(
  db: Collections,
  workspace: string,
  options: GenerateOptions,
): Promise<{ generated: GeneratedDataset; outcome: ImportOutcome & { ok: true } }> {
  const generated = generateDataset(options);
  const outcome = await importJsonl(db, {
    now: new Date(),
    workspace,
    content: generated.lines.join('\n'),
  });
  if (!outcome.ok) {
    throw new Error(
      `generated data does not import: ${JSON.stringify(outcome.errors.slice(0, 3))}`,
    );
  }
  return { generated, outcome };
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (isMain) {
  const { values } = parseCommandLine(import.meta.url, {
    options: {
      size: { type: 'string', default: 'quick' },
      facts: { type: 'string' },
      entities: { type: 'string' },
      episodes: { type: 'string' },
      memories: { type: 'string' },
      dataset: { type: 'string', default: 'bench_user' },
      seed: { type: 'string', default: '42' },
      out: { type: 'string' },
    },
  });
  const size = SIZES[values.size as keyof typeof SIZES];
  if (!size) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
  const pick = (v: string | undefined, d: number) => (v === undefined ? d : Number(v));
  const generated = generateDataset({
    dataset: values.dataset,
    seed: Number(values.seed),
    facts: pick(values.facts, size.facts),
    entities: pick(values.entities, size.entities),
    episodes: pick(values.episodes, size.episodes),
    memories: pick(values.memories, size.memories),
  });
  const text = `${generated.lines.join('\n')}\n`;
  if (values.out) {
    writeFileSync(values.out, text);
    process.stderr.write(
      `${JSON.stringify({ counts: generated.counts, probes: generated.probes })}\n`,
    );
  } else {
    process.stdout.write(text);
  }
}
