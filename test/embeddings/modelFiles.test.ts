import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureModelFiles, readModelFiles } from '../../src/embeddings/modelFiles.js';

/**
 * The embedding model's files (src/embeddings/modelFiles.ts): checked by their sums on
 * every start, and each way they can be wrong is one line that says what to do. The run's
 * own copy (fetched by test/setup/model.ts) is the model that passes.
 */

const MODEL_DIR = new URL('../../models/all-minilm-l6-v2-q/', import.meta.url).pathname;
const dirs: string[] = [];
const emptyDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'model-files-'));
  dirs.push(dir);
  return dir;
};

/** A repository on loopback that answers every artifact with the same wrong bytes. */
let repository: Server;
let repositoryUrl: string;
beforeAll(async () => {
  repository = createServer((_req, res) => res.end(Buffer.from('not the artifact')));
  await new Promise<void>((resolve) => repository.listen(0, '127.0.0.1', resolve));
  repositoryUrl = `http://127.0.0.1:${(repository.address() as AddressInfo).port}/maven2`;
});
afterAll(async () => {
  await new Promise((resolve) => repository.close(resolve));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const oneLine = (error: unknown) => {
  expect(error).toBeInstanceOf(Error);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  return message;
};

describe('the embedding model on disk', () => {
  it('the fetched model passes its sums', () => {
    const files = readModelFiles(MODEL_DIR);
    expect(files.model.byteLength).toBeGreaterThan(20_000_000);
    expect(files.tokenizer.byteLength).toBeGreaterThan(500_000);
  });

  it('a missing model is one line naming the fix', () => {
    let caught: unknown;
    try {
      readModelFiles(emptyDir());
    } catch (error) {
      caught = error;
    }
    const message = oneLine(caught);
    expect(message).toMatch(/embedding model is missing \(model\.onnx\)/);
    expect(message).toContain('npm run build:model');
    expect(message).toContain('EMBEDDINGS=off');
  });

  it('a corrupt model is one line, the file named', () => {
    const dir = emptyDir();
    copyFileSync(join(MODEL_DIR, 'model.onnx'), join(dir, 'model.onnx'));
    writeFileSync(join(dir, 'tokenizer.json'), '{"truncated": ');
    let caught: unknown;
    try {
      readModelFiles(dir);
    } catch (error) {
      caught = error;
    }
    expect(oneLine(caught)).toMatch(/corrupt \(tokenizer\.json does not match its SHA-256\)/);
  });
});

describe('fetching the model', () => {
  it('does not fetch what is there and right', async () => {
    // An unreachable repository: a fetch would fail.
    await expect(ensureModelFiles(() => {}, MODEL_DIR, 'http://127.0.0.1:9')).resolves.toBe(
      MODEL_DIR,
    );
  });

  it('an unreachable repository is one line, with what to do', async () => {
    const error = await ensureModelFiles(() => {}, emptyDir(), 'http://127.0.0.1:9').catch(
      (e: unknown) => e,
    );
    expect(oneLine(error)).toMatch(
      /could not be fetched from http:\/\/127\.0\.0\.1:9\/.*EMBEDDINGS=off/,
    );
  });

  it('an artifact that is not the pinned one is refused, and nothing is written', async () => {
    const dir = emptyDir();
    const lines: string[] = [];
    const error = await ensureModelFiles((line) => lines.push(line), dir, repositoryUrl).catch(
      (e: unknown) => e,
    );
    expect(lines).toEqual([expect.stringContaining(`Fetching the embedding model`)]);
    expect(oneLine(error)).toMatch(/does not match its SHA-256/);
    expect(() => readModelFiles(dir)).toThrow(/missing/);
  });
});
