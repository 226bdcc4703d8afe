import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { inject } from 'vitest';
import { recordedCommand } from '../indexes/plan.js';

/**
 * Records the store's commands for the index check (test/indexes/storeQueries.check.ts):
 * every MongoClient a test process connects (the store's, a test's own concurrent clients)
 * reports the commands it sends, and those carrying a `store:` comment are kept, each
 * shape once per process, in the run's folder. Cheap: other commands cost one comparison,
 * and a shape is written only the first time it is seen. Child processes (the server and
 * CLI that some tests spawn) are not recorded: they run the same store functions.
 */

const HOOK = Symbol.for('bitemporal-memory-gateway.recordStoreCommands');

interface Recorder {
  file: string;
  seen: Set<string>;
}

// One per process: the driver module, and so the hook, outlive a single test file.
const shared = globalThis as typeof globalThis & { [HOOK]?: Recorder };
shared[HOOK] ??= {
  file: join(inject('storeCommandsDir'), `${process.pid}.jsonl`),
  seen: new Set(),
};
const recorder = shared[HOOK];

function record(event: CommandStartedEvent): void {
  const command = recordedCommand(event.commandName, event.command);
  if (!command) return;
  const line = JSON.stringify(command);
  if (recorder.seen.has(line)) return;
  recorder.seen.add(line);
  appendFileSync(recorder.file, `${line}\n`);
}

const proto = MongoClient.prototype as MongoClient & { [HOOK]?: true };
if (!proto[HOOK]) {
  proto[HOOK] = true;
  const connect = proto.connect;
  const hooked = new WeakSet<MongoClient>();
  // Every connect, explicit or the driver's automatic one, passes here before the
  // connection pool exists, which is when the monitoring setting must be on.
  proto.connect = function (this: MongoClient) {
    if (!hooked.has(this)) {
      hooked.add(this);
      // A public driver setting whose setter the typings leave out.
      (this as unknown as { monitorCommands: boolean }).monitorCommands = true;
      this.on('commandStarted', record);
    }
    return connect.call(this);
  } as MongoClient['connect'];
}
