import { z } from 'zod';
import { normalizeUuid, UUID_PATTERN } from '../domain/ids.js';
import { ENTITY_TYPES } from '../domain/names.js';
import {
  perSupaCloudField,
  SUPACLOUD_MEMORY_FIELDS,
  type SupaCloudKind,
  type SupaCloudMemoryName,
  supaCloudMemoryEntries,
} from '../domain/supaCloudMemory.js';
import { INSTANT_FORMAT, isoOrNull, parseInstant } from '../domain/time.js';
import {
  type EntityDoc,
  type EpisodeDoc,
  entityDocument,
  episodeDocument,
  type FactDoc,
  factDocument,
  type MemoryDoc,
  memoryDocument,
  type StoredDocument,
} from '../store/documents.js';
import type { Tenant } from '../store/tenant.js';
import { describeIssues, illFormedText } from '../validation.js';

/**
 * The JSONL import/export format: one JSON object a line, with `"type"` one of `entity`,
 * `episode`, `fact` or `memory`, and an optional `"dataset"` that wins over `--dataset`.
 * Facts use the Memory Soda field names (camelCase) plus `recordedAt`, `invalidReason`,
 * `supersededBy`, `replaceExisting`, and a corrected version's `correctionOf` and
 * `correctedBy`; memories use SupaCloud's snake_case fields exactly as its API returns
 * them (`workspace_id` is replaced by the target workspace). Export writes this same
 * format, so export → import round-trips.
 */

const instant = z.string().transform((value, ctx) => {
  const date = parseInstant(value);
  if (!date) {
    ctx.addIssue({
      code: 'custom',
      message: `not ${INSTANT_FORMAT}: "${value}"`,
    });
    return z.NEVER;
  }
  return date;
});
const uuid = z
  .string()
  .regex(UUID_PATTERN, 'expected a UUID')
  .transform((v) => normalizeUuid(v));
const text = z.string().min(1, 'must not be empty');
const dataset = z.string().min(1, 'must not be empty').optional();

const entityLine = z.strictObject({
  type: z.literal('entity'),
  dataset,
  name: text,
  entityType: z.enum(ENTITY_TYPES),
  entityId: uuid.optional(),
  updatedAt: instant.optional(),
});

const episodeLine = z.strictObject({
  type: z.literal('episode'),
  dataset,
  episodeId: uuid,
  occurredAt: instant,
  source: z.string(),
  content: z.string(),
  /** When the store recorded it (default: when it is imported), as a fact's. */
  recordedAt: instant.optional(),
});

const factLine = z
  .strictObject({
    type: z.literal('fact'),
    dataset,
    factId: uuid,
    subject: text,
    predicate: text,
    object: text,
    objectIsEntity: z.boolean().default(false),
    confidence: z.number().min(0).max(1),
    sourceQuote: z.string().nullable().default(null),
    validAt: instant,
    validUntil: instant.nullable().default(null),
    invalidAt: instant.nullable().default(null),
    episodeId: uuid.nullable().default(null),
    recordedAt: instant.optional(),
    invalidReason: z.enum(['superseded', 'deleted']).nullable().default(null),
    supersededBy: uuid.nullable().default(null),
    replaceExisting: z.boolean().default(false),
    /** A corrected version's (docs/TEMPORAL_MODEL.md): the fact it corrects, and the one ending it. */
    correctionOf: uuid.nullable().default(null),
    correctedBy: uuid.nullable().default(null),
  })
  .superRefine((f, ctx) => {
    if ((f.correctionOf === null) !== (f.correctedBy === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['correctedBy'],
        message: 'correctionOf and correctedBy go together: both set or both null',
      });
    }
    if (f.correctionOf !== null && f.validUntil === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['validUntil'],
        message: 'a corrected version ends where the fact that corrects it begins: required',
      });
    }
    if (f.validUntil && f.validUntil <= f.validAt) {
      ctx.addIssue({ code: 'custom', path: ['validUntil'], message: 'must be after validAt' });
    }
    if (f.recordedAt && f.invalidAt && f.invalidAt < f.recordedAt) {
      ctx.addIssue({
        code: 'custom',
        path: ['invalidAt'],
        message: 'must not be before recordedAt',
      });
    }
    if ((f.invalidAt === null) !== (f.invalidReason === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['invalidReason'],
        message: 'invalidAt and invalidReason go together: both set or both null',
      });
    }
    if (f.supersededBy !== null && f.invalidReason !== 'superseded') {
      ctx.addIssue({
        code: 'custom',
        path: ['supersededBy'],
        message: 'only a fact with invalidReason "superseded" has supersededBy',
      });
    }
  });

const INT32_MAX = 2_147_483_647;

/** The import rule of each kind of SupaCloud value. */
const IMPORT_RULE: Record<SupaCloudKind, z.ZodType> = {
  instant,
  uuid,
  double: z.number().finite(),
  int32: z
    .number()
    .int()
    .min(-INT32_MAX - 1)
    .max(INT32_MAX),
  string: z.string(),
  boolean: z.boolean(),
};

type MemoryFieldSpecs = typeof SUPACLOUD_MEMORY_FIELDS;
interface KindValue {
  instant: Date;
  uuid: string;
  double: number;
  int32: number;
  string: string;
  boolean: boolean;
}
/** The value a memory line holds under SupaCloud's name `N`, by the list's kind. */
type LineValue<N extends SupaCloudMemoryName> =
  | KindValue[MemoryFieldSpecs[N]['kind']]
  | (MemoryFieldSpecs[N]['nullable'] extends true ? null : never);
/** A memory line's values under the memory field names. */
type MemoryLineFields = {
  -readonly [N in Exclude<
    SupaCloudMemoryName,
    'workspace_id'
  > as MemoryFieldSpecs[N]['field']]: LineValue<N>;
};

/**
 * Every SupaCloud field by its kind's rule (a nullable one may be left out: null), but
 * `workspace_id`, which only has to be a string (the target workspace replaces it), and
 * `version`, which counts from 1.
 */
const memoryFieldRules = {
  ...(perSupaCloudField((spec) =>
    spec.nullable ? IMPORT_RULE[spec.kind].nullable().default(null) : IMPORT_RULE[spec.kind],
  ) as { [N in SupaCloudMemoryName]: z.ZodType<LineValue<N>> }),
  workspace_id: z.string().optional(),
  version: z.number().int().min(1).max(INT32_MAX),
};

const memoryLine = z
  .strictObject({ type: z.literal('memory'), dataset, ...memoryFieldRules })
  .superRefine((m, ctx) => {
    if (m.valid_until && m.valid_until <= m.valid_from) {
      ctx.addIssue({ code: 'custom', path: ['valid_until'], message: 'must be after valid_from' });
    }
  });

const line = z.discriminatedUnion('type', [entityLine, episodeLine, factLine, memoryLine]);
type Line = z.output<typeof line>;

type ImportRecord =
  | { kind: 'entity'; doc: EntityDoc; hasUpdatedAt: boolean }
  | { kind: 'episode'; doc: EpisodeDoc }
  | { kind: 'fact'; doc: FactDoc }
  | { kind: 'memory'; doc: MemoryDoc };

export interface LineError {
  line: number;
  message: string;
}

export type ParseResult =
  | { ok: true; records: ImportRecord[]; datasets: Set<string> }
  | { ok: false; errors: LineError[] };

/**
 * Validates a whole file before anything is written. Returns every bad line (with its
 * number and reason), or the documents to write. Also rejects a line that repeats the id
 * of an earlier one with other content, since only one of them could be stored.
 */
export function parseImportFile(
  content: string,
  options: { workspaceId: string; defaultDataset?: string | null; now: Date },
): ParseResult {
  const errors: LineError[] = [];
  const records: ImportRecord[] = [];
  const datasets = new Set<string>();
  const seen = new Map<string, { line: number; json: string }>();
  const lines = content.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    const lineNo = i + 1;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      errors.push({ line: lineNo, message: `not valid JSON (${(error as Error).message})` });
      continue;
    }
    const illFormed = illFormedText(json);
    if (illFormed) {
      errors.push({ line: lineNo, message: describeIssues([illFormed]) });
      continue;
    }
    const parsed = line.safeParse(json);
    if (!parsed.success) {
      errors.push({ line: lineNo, message: describeIssues(parsed.error.issues) });
      continue;
    }
    const ds = parsed.data.dataset ?? options.defaultDataset;
    if (!ds) {
      errors.push({
        line: lineNo,
        message: 'no dataset: add "dataset" to the line or pass --dataset',
      });
      continue;
    }
    const record = toRecord(
      parsed.data,
      { workspaceId: options.workspaceId, dataset: ds },
      options.now,
    );
    const key = record.doc._id;
    const again = seen.get(key);
    if (again && again.json !== raw) {
      errors.push({
        line: lineNo,
        message: `repeats the ${record.kind} of line ${again.line} with other content`,
      });
      continue;
    }
    if (again) continue;
    seen.set(key, { line: lineNo, json: raw });
    datasets.add(ds);
    records.push(record);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, records, datasets };
}

/** The stored document of a valid line, built by the store's builder of its kind. */
function toRecord(l: Line, tenant: Tenant, now: Date): ImportRecord {
  switch (l.type) {
    case 'entity':
      return {
        kind: 'entity',
        hasUpdatedAt: l.updatedAt !== undefined,
        doc: entityDocument(tenant, {
          name: l.name,
          type: l.entityType,
          entityId: l.entityId ?? null,
          updatedAt: l.updatedAt ?? now,
        }),
      };
    case 'episode':
      return {
        kind: 'episode',
        doc: episodeDocument(tenant, {
          episodeId: l.episodeId,
          occurredAt: l.occurredAt,
          source: l.source,
          content: l.content,
          recordedAt: l.recordedAt ?? now,
        }),
      };
    case 'fact': {
      const { type: _type, dataset: _dataset, ...fact } = l;
      return {
        kind: 'fact',
        doc: factDocument(tenant, {
          ...fact,
          // Without recordedAt, the store is taken to have learned the fact when it became
          // valid (or when it was invalidated, if that was earlier), so `asOf` works on
          // histories exported from systems that do not track transaction time.
          recordedAt:
            l.recordedAt ?? (l.invalidAt && l.invalidAt < l.validAt ? l.invalidAt : l.validAt),
        }),
      };
    }
    case 'memory':
      return { kind: 'memory', doc: memoryDocument(tenant, memoryLineFields(l)) };
  }
}

/** A memory line's values under the memory field names, from the one list of them. */
function memoryLineFields(l: Extract<Line, { type: 'memory' }>): MemoryLineFields {
  return Object.fromEntries(
    supaCloudMemoryEntries
      .filter(([name]) => name !== 'workspace_id')
      .map(([name, spec]) => [spec.field, l[name]]),
  ) as MemoryLineFields;
}

/** The export line of a stored document: the import format, every field present. */
export function exportLine(item: StoredDocument): Record<string, unknown> {
  switch (item.kind) {
    case 'entity':
      return entityToLine(item.doc);
    case 'episode':
      return episodeToLine(item.doc);
    case 'fact':
      return factToLine(item.doc);
    case 'memory':
      return memoryToLine(item.doc);
  }
}

function entityToLine(d: EntityDoc): Record<string, unknown> {
  return {
    type: 'entity',
    dataset: d.dataset,
    entityId: d.entityId,
    name: d.name,
    entityType: d.type,
    updatedAt: isoOrNull(d.updatedAt),
  };
}

/**
 * A line of a kind whose line names are its document's: the fields of the line's import
 * schema, in its order, instants written as they are read.
 */
function lineOf(
  type: 'episode' | 'fact',
  shape: Record<string, unknown>,
  d: EpisodeDoc | FactDoc,
): Record<string, unknown> {
  const line: Record<string, unknown> = { type, dataset: d.dataset };
  for (const name of Object.keys(shape)) {
    if (name === 'type' || name === 'dataset') continue;
    const value = d[name as keyof typeof d];
    line[name] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  return line;
}

function episodeToLine(d: EpisodeDoc): Record<string, unknown> {
  return lineOf('episode', episodeLine.shape, d);
}

function factToLine(d: FactDoc): Record<string, unknown> {
  return { ...lineOf('fact', factLine.shape, d), replaceExisting: d.replaceExisting === true };
}

/** The list, checked to name only stored memory fields. */
const MEMORY_LINE_SPECS: Record<
  SupaCloudMemoryName,
  { field: keyof MemoryDoc; kind: SupaCloudKind }
> = SUPACLOUD_MEMORY_FIELDS;

function memoryToLine(d: MemoryDoc): Record<string, unknown> {
  const line: Record<string, unknown> = { type: 'memory', dataset: d.dataset };
  for (const [name, spec] of Object.entries(MEMORY_LINE_SPECS)) {
    const value = d[spec.field];
    line[name] = spec.kind === 'instant' ? isoOrNull(value as Date | null) : value;
  }
  return line;
}
