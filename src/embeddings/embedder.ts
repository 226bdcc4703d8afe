import { Tokenizer } from '@huggingface/tokenizers';
import ort from 'onnxruntime-node';

/**
 * Text to meaning: the embedding model (modelFiles.ts) run in-process by ONNX Runtime,
 * mean-pooled over the tokens and scaled to unit length, then stored as int8 (each of the
 * 384 components × 127, rounded): 384 bytes a text, and the dot product of two over 127²
 * is their cosine within about 1 %. A vector depends on the text alone, so a replay, an
 * export and its import find the same one.
 */
export const EMBEDDING_DIMENSIONS = 384;
export const EMBEDDING_SCALE = 127;

export interface Embedder {
  /** One vector per text, in order (int8, EMBEDDING_DIMENSIONS components). */
  embed(texts: readonly string[]): Promise<Int8Array[]>;
}

/** The model reads at most this many tokens of a text (a statement is a few dozen). */
const MAX_TOKENS = 256;
/** Texts run through the model together: measured fastest per text on one core. */
const BATCH = 16;
/** Texts whose vector is kept, the last used first out: the same statement embedded again. */
const CACHE_SIZE = 4096;

/** The cosine of two stored vectors. */
export function similarity(a: Int8Array, b: Int8Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot / (EMBEDDING_SCALE * EMBEDDING_SCALE);
}

/** The mean of a text's token states, at unit length, as stored. */
function pooled(states: Float32Array, offset: number, tokens: number): Int8Array {
  const mean = new Float64Array(EMBEDDING_DIMENSIONS);
  for (let t = 0; t < tokens; t++) {
    const row = offset + t * EMBEDDING_DIMENSIONS;
    for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) mean[d]! += states[row + d]!;
  }
  let norm = 0;
  for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) norm += mean[d]! * mean[d]!;
  norm = Math.sqrt(norm) || 1;
  const vector = new Int8Array(EMBEDDING_DIMENSIONS);
  for (let d = 0; d < EMBEDDING_DIMENSIONS; d++) {
    vector[d] = Math.max(-127, Math.min(127, Math.round((mean[d]! / norm) * EMBEDDING_SCALE)));
  }
  return vector;
}

/**
 * Loads the model from its files' bytes (modelFiles.ts reads and checks them: the caller
 * passes `readModelFiles()`, so this file, which the store's types name, imports nothing
 * of the start-up's).
 */
export async function loadEmbedder(files: {
  model: Uint8Array;
  tokenizer: Uint8Array;
}): Promise<Embedder> {
  const tokenizer = new Tokenizer(JSON.parse(new TextDecoder().decode(files.tokenizer)), {});
  // One thread: the gateway's own requests share the machine's cores with the model.
  const session = await ort.InferenceSession.create(files.model, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const output = session.outputNames[0]!;
  const cache = new Map<string, Int8Array>();

  async function run(texts: readonly string[]): Promise<Int8Array[]> {
    const encoded = texts.map((text) => {
      const ids: number[] = tokenizer.encode(text).ids;
      return ids.length <= MAX_TOKENS ? ids : [...ids.slice(0, MAX_TOKENS - 1), ids.at(-1)!];
    });
    const width = Math.max(...encoded.map((ids) => ids.length));
    const ids = new BigInt64Array(texts.length * width);
    const mask = new BigInt64Array(texts.length * width);
    encoded.forEach((row, i) => {
      row.forEach((id: number, j: number) => {
        ids[i * width + j] = BigInt(id);
        mask[i * width + j] = 1n;
      });
    });
    const shape = [texts.length, width];
    const result = await session.run({
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
      token_type_ids: new ort.Tensor('int64', new BigInt64Array(ids.length), shape),
    });
    const states = result[output]!.data as Float32Array;
    return encoded.map((row, i) => pooled(states, i * width * EMBEDDING_DIMENSIONS, row.length));
  }

  return {
    async embed(texts) {
      const found = new Map<string, Int8Array>();
      for (const text of new Set(texts)) {
        const cached = cache.get(text);
        if (!cached) continue;
        // Last used, last out.
        cache.delete(text);
        cache.set(text, cached);
        found.set(text, cached);
      }
      const missing = [...new Set(texts)].filter((t) => !found.has(t));
      for (let i = 0; i < missing.length; i += BATCH) {
        const batch = missing.slice(i, i + BATCH);
        const vectors = await run(batch);
        batch.forEach((text, j) => {
          found.set(text, vectors[j]!);
          cache.set(text, vectors[j]!);
          if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
        });
      }
      return texts.map((text) => found.get(text)!);
    },
  };
}
