import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../src/cli/help.js';
import { type RunningFerretDb, startFerretDb } from '../src/embedded/ferretdb.js';
import { createGateway } from '../src/http/app.js';
import { openDatabase } from '../src/store/database.js';
import { createApiKey } from '../src/store/workspaces.js';
import { SIZES, seedDataset } from './generate.js';
import { median, round2 } from './measure.js';

/**
 * `npm run bench:mcp`: recall through MCP against recall through Memory Soda's REST route,
 * side by side on the same data. One gateway, driven in-process through `gateway.fetch`
 * (the whole edge pipeline, as a listener hands it requests; the listener's own work is
 * the same for both), answers alternating rounds of the same question, pinned with asOf:
 * `POST /v1/memory/recall` and `POST /mcp` with one `tools/call` of `recall` (what an
 * agent's host sends once it has initialized; stateless, so nothing else). Two scenarios:
 * the tool asked for facts only (`memories: false`), the REST route's answer, which the
 * target is judged on; and the tool as agents call it, facts, memories and context, which
 * also reads the memories (three more database commands). Per side it reports the Node
 * process's CPU per call (`process.cpuUsage`: the database's work is FerretDB's, another
 * process), the median of the per-round ratios (so drift on a shared machine hits both
 * sides of a pair alike) and the database commands per call. Target: MCP within 1.3x of
 * REST.
 *
 *   npm run bench:mcp -- [--rounds 12] [--calls 40] [--facts N]
 */

const { values } = parseCommandLine(import.meta.url, {
  options: {
    rounds: { type: 'string', default: '12' },
    calls: { type: 'string', default: '40' },
    facts: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const calls = Number(values.calls);
const TARGET = 1.3;

const dir = mkdtempSync(join(tmpdir(), 'memory-gateway-bench-mcp-'));
let ferret: RunningFerretDb | null = null;
try {
  if (!process.env.MONGODB_URI) ferret = await startFerretDb(join(dir, 'db'));
  const uri = process.env.MONGODB_URI ?? ferret!.uri;
  const database = await openDatabase(uri, `bench_mcp_${Date.now()}`, { monitorCommands: true });
  let commands = 0;
  database.client.on('commandStarted', () => commands++);
  const size = values.facts ? { ...SIZES.quick, facts: Number(values.facts) } : SIZES.quick;
  const { generated } = await seedDataset(database.collections, 'bench', {
    ...size,
    dataset: 'bench',
  });
  const { probes } = generated;
  const key = (await createApiKey(database.collections, 'bench', ['read'])).key;
  const gateway = createGateway({ database, keyUseFlushMs: 0 });
  const question = {
    dataset: probes.dataset,
    query: `who ${probes.q}?`,
    limit: 10,
    asOf: probes.asOf.slice(0, 10),
  };
  const headers = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const rest = async () => {
    const response = await gateway.fetch(
      new Request('http://bench.local/v1/memory/recall', {
        method: 'POST',
        headers,
        body: JSON.stringify(question),
      }),
    );
    if (response.status !== 200) throw new Error(`REST ${response.status}`);
    return ((await response.json()) as { facts: unknown[] }).facts.length;
  };
  let id = 0;
  /** MCP 2026-07-28's request: its revision and client named in `_meta` and in headers. */
  const current = {
    headers: {
      ...headers,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'recall',
    },
    meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  };
  const mcp =
    (args: Record<string, unknown>, revision: 'current' | '2025' = '2025') =>
    async () => {
      const modern = revision === 'current';
      const response = await gateway.fetch(
        new Request('http://bench.local/mcp', {
          method: 'POST',
          headers: modern ? current.headers : headers,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: ++id,
            method: 'tools/call',
            params: {
              name: 'recall',
              arguments: args,
              ...(modern ? { _meta: current.meta } : {}),
            },
          }),
        }),
      );
      const body = (await response.json()) as {
        result?: { isError?: boolean; structuredContent: { facts: unknown[] } };
      };
      if (response.status !== 200 || !body.result || body.result.isError) {
        throw new Error(`MCP ${response.status} ${JSON.stringify(body)}`);
      }
      return body.result.structuredContent.facts.length;
    };
  const cpuMsPerCall = async (call: () => Promise<unknown>) => {
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) await call();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / calls;
  };
  const commandsPerCall = async (call: () => Promise<unknown>) => {
    const before = commands;
    await call();
    return commands - before;
  };
  const scenarios = [
    {
      id: 'recall',
      title: "recall, facts only: the REST route's answer",
      mcp: mcp({ ...question, memories: false }),
      target: true,
    },
    {
      id: 'recall (2026-07-28)',
      title: "recall, facts only, at MCP's current revision (the SDK's stateless handler)",
      mcp: mcp({ ...question, memories: false }, 'current'),
      target: true,
    },
    {
      id: 'recall+memories',
      title: "recall as agents ask it: facts, memories and context (REST's answer has no memories)",
      mcp: mcp(question),
      target: false,
    },
  ];
  const results = [];
  for (const scenario of scenarios) {
    // Both sides recall the same facts (and warm up).
    const [restFacts, mcpFacts] = [await rest(), await scenario.mcp()];
    if (restFacts !== mcpFacts || restFacts === 0) {
      throw new Error(`REST recalled ${restFacts} facts, MCP ${mcpFacts}: not the same answer`);
    }
    const sides = { rest: [] as number[], mcp: [] as number[] };
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const a = await cpuMsPerCall(rest);
      const b = await cpuMsPerCall(scenario.mcp);
      sides.rest.push(a);
      sides.mcp.push(b);
      ratios.push(b / a);
    }
    const ratio = round2(median(ratios));
    results.push({
      scenario: scenario.id,
      title: scenario.title,
      recalledFacts: restFacts,
      restCpuMsPerCall: round2(median(sides.rest)),
      mcpCpuMsPerCall: round2(median(sides.mcp)),
      ratio,
      range: [Math.min(...ratios), Math.max(...ratios)].map(round2),
      dbCommandsPerCall: {
        rest: await commandsPerCall(rest),
        mcp: await commandsPerCall(scenario.mcp),
      },
      ...(scenario.target
        ? { target: `MCP CPU per call <= ${TARGET}x REST's`, met: ratio <= TARGET }
        : {}),
    });
  }
  process.stdout.write(
    `${JSON.stringify({ facts: size.facts, rounds, calls, results }, null, 2)}\n`,
  );
  gateway.beginShutdown();
  await database.client.close();
} finally {
  await ferret?.stop();
  rmSync(dir, { recursive: true, force: true });
}
