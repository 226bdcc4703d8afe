import { loadConfig, StartupError } from '../config.js';
import { type OpenedStore, openStore } from '../openStore.js';
import { USAGE_EXIT_CODE } from './help.js';

/** A CLI usage or input problem: printed as one message, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A command that failed part-way through its work (the database went away, say): printed
 * as one message saying what was done and what was not, exit code 1.
 */
export class CommandFailedError extends Error {
  override name = 'CommandFailedError';
}

/**
 * Runs a CLI command with the configured store open, and always closes it (stopping the
 * embedded database if this command started it). Expected problems print one message.
 */
export async function runCommand(
  body: (store: OpenedStore) => Promise<void>,
  /** `embeddings`: the command stores vectors (EMBEDDINGS=on loads the model). */
  options: { embeddings?: boolean } = {},
): Promise<void> {
  let store: OpenedStore | null = null;
  const stop = async () => {
    await store?.close();
    process.exit(130);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const config = loadConfig();
    store = await openStore(
      config,
      'cli',
      (line) => process.stderr.write(`${line}\n`),
      {},
      options,
    );
    await body(store);
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof CommandFailedError ||
      error instanceof StartupError
    ) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = error instanceof UsageError ? USAGE_EXIT_CODE : 1;
    } else {
      throw error;
    }
  } finally {
    await store?.close();
  }
}
