import type { CommandStartedEvent } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext } from '../../src/context.js';
import type { Database } from '../../src/store/database.js';
import { DatabaseTimeoutError, withDeadline } from '../../src/store/deadline.js';
import { listFacts } from '../../src/store/facts.js';
import { openTestDatabase } from '../helpers/database.js';
import { testTenant } from '../helpers/episodeInput.js';

/**
 * A request's database time is one bound for all its commands (src/store/deadline.ts):
 * each read carries what is left as maxTimeMS, and nothing is sent once it is up.
 */

let database: Database;
const commands: CommandStartedEvent[] = [];

beforeAll(async () => {
  database = await openTestDatabase({ monitorCommands: true });
  database.client.on('commandStarted', (event) => commands.push(event));
});

const tenant = testTenant('deadline', 'd');
const query = { selection: { kind: 'all' as const } };

describe('withDeadline', () => {
  it('every read carries the time left as maxTimeMS, never more than the caller asked', async () => {
    let now = 0;
    const db = withDeadline(database.collections, 2000, () => now);
    commands.length = 0;
    await listFacts(db, tenant, query, { first: 10 });
    now = 1500;
    await db.facts.countDocuments({ workspaceId: tenant.workspaceId });
    await db.facts.find({ workspaceId: tenant.workspaceId }, { maxTimeMS: 100 }).toArray();
    const reads = commands.filter((e) => ['find', 'aggregate'].includes(e.commandName));
    expect(reads.map((e) => e.command.maxTimeMS)).toEqual([2000, 500, 100]);
  });

  it('past the deadline nothing is sent: reads and writes alike', async () => {
    const db = withDeadline(database.collections, 1000, () => 1000);
    commands.length = 0;
    await expect(
      (async () => listFacts(db, tenant, query, { first: 10 }))(),
    ).rejects.toBeInstanceOf(DatabaseTimeoutError);
    await expect(
      db.datasets.insertOne({ _id: 'x', workspaceId: 'w', name: 'x', createdAt: new Date() }),
    ).rejects.toBeInstanceOf(DatabaseTimeoutError);
    expect(commands).toEqual([]);
  });

  it('the request context bounds the whole request by DB_TIMEOUT_MS', async () => {
    // Long enough that the read below is sent before it ends, however loaded the machine.
    const dbTimeoutMs = 60_000;
    const ctx = await createRequestContext(new Request('http://x/'), database.collections, {
      now: new Date(),
      dbTimeoutMs,
    });
    expect(ctx.deadline - performance.now()).toBeLessThanOrEqual(dbTimeoutMs);
    commands.length = 0;
    await ctx.store.facts.find({ workspaceId: 'nobody' }).toArray();
    expect(commands[0]!.command.maxTimeMS).toBeLessThanOrEqual(dbTimeoutMs);
    expect(commands[0]!.command.maxTimeMS).toBeGreaterThan(0);
  });
});
