import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';
import { describeQuery, judgeQuery, type RecordedCommand } from './plan.js';

/**
 * Runs after the whole suite (the `indexes` project in vitest.config.ts comes second):
 * every filter and sort the store sent while the suite ran, as test/setup/
 * recordStoreCommands.ts recorded them, must be served by an index of INDEXES, with the
 * tenant leading (plan.ts has the rules, docs/SCALING.md the reasons). A run that recorded
 * nothing fails: a broken recorder (or a run of this check alone) must not pass silently.
 */

const dir = inject('storeCommandsDir');
const lines = new Set(
  readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n'))
    .filter((line) => line !== ''),
);
const commands = [...lines].map((line) => JSON.parse(line) as RecordedCommand);
const functions = new Set(commands.map((c) => c.comment));

it(`each of the ${commands.length} query shapes that ${functions.size} store functions sent is served by a declared index`, () => {
  expect(
    commands.length,
    'no store command was recorded: the recorder (test/setup/recordStoreCommands.ts) is broken, or no test that uses the store ran with this check',
  ).toBeGreaterThan(0);
  const unserved = new Set<string>();
  for (const command of commands) {
    for (const query of command.queries) {
      const verdict = judgeQuery(command.collection, query);
      if (!verdict.served) unserved.add(`${describeQuery(command, query)}\n  ${verdict.why}`);
    }
  }
  const report = [...unserved].sort().join('\n\n');
  expect(unserved.size, `store queries no declared index serves:\n\n${report}\n`).toBe(0);
});
